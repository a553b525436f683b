package model

import (
	"strings"
	"testing"
)

// TestEnvRemoveForceDropsOnlyLostMachinesUnits: a forced env-remove is
// refused while a unit of the environment is on a machine whose agent
// answers (it still runs the dying hooks), and drops the environment,
// units and all, once every remaining unit is on a lost machine.
func TestEnvRemoveForceDropsOnlyLostMachinesUnits(t *testing.T) {
	cl := NewCluster()
	capply(t, cl, 1, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "m1", Address: "10.0.0.1"}})
	capply(t, cl, 2, envAdd("dev", uuidA))
	capply(t, cl, 3, deployTo("dev", "dev", 1))
	if u := cl.Envs["dev"].State.Units["db/0"]; u == nil || u.Machine != "m1" {
		t.Fatalf("db/0: %+v; want it on m1", u)
	}
	force := &Command{Op: OpEnvRemove, EnvRemove: &EnvRemove{Name: "dev", Force: true}}
	if _, err := capplyErr(t, cl, 4, force); err == nil || !strings.Contains(err.Error(), "1 units (db/0 first)") {
		t.Fatalf("forcing dev while m1 answers: %v", err)
	}
	if _, ok := cl.Envs["dev"]; !ok {
		t.Fatal("a refused forced removal dropped dev")
	}
	capply(t, cl, 4, &Command{Op: OpLiveness, Liveness: &SetLiveness{Lost: map[string]bool{"m1": true}}})
	if !cl.Envs["dev"].State.Machines["m1"].Lost {
		t.Fatal("dev's copy of m1 is not lost")
	}
	// Without --force the lost machine's unit still holds it.
	if _, err := capplyErr(t, cl, 5, &Command{Op: OpEnvRemove, EnvRemove: &EnvRemove{Name: "dev"}}); err == nil || !strings.Contains(err.Error(), "still holds 1 units") {
		t.Fatalf("removing dev without force: %v", err)
	}
	capply(t, cl, 5, force)
	if _, ok := cl.Envs["dev"]; ok {
		t.Fatal("the forced removal kept dev")
	}
	if l, ok := force.Level(); !ok || l != LevelRecorded {
		t.Errorf("env-remove with force needs level %d; want %d", l, LevelRecorded)
	}
}
