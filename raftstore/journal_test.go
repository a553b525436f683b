package raftstore

import (
	"bytes"
	"io"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/model"
)

// TestEachEnvironmentJournalsItsOwnChanges: the FSM keeps, beside each
// environment's state, what every entry changed there: an entry of dev's
// is in dev's journal alone, a change to the cluster's machines in every
// environment's, and a restored FSM starts new journals at the snapshot's
// index, from which readers that saw that index miss nothing.
func TestEachEnvironmentJournalsItsOwnChanges(t *testing.T) {
	a := fsmEnvs(t)
	at := a.index
	two := 2
	scaled := deployIn("dev")
	scaled.Deploy.Env.Services["db"] = model.ServiceSpec{Charm: "./db", CharmHash: "h1", Units: &two}
	a.apply(scaled)
	if got, ok := a.f.changes("dev", at); !ok || len(got) != 1 || got[0].Index != at+1 {
		t.Fatalf("dev's journal after its deploy: %+v, %v; want the deploy's entry", got, ok)
	}
	if got, ok := a.f.changes("", at); !ok || len(got) != 0 {
		t.Fatalf("the default environment's journal after dev's deploy: %+v, %v; want nothing", got, ok)
	}
	a.apply(machineCmd("m3", "10.0.0.3"))
	for _, env := range []string{"", "dev"} {
		if got, ok := a.f.changes(env, at+1); !ok || len(got) != 1 || got[0].Index != at+2 {
			t.Errorf("%q's journal after a machine: %+v, %v; want the machine's entry", env, got, ok)
		}
	}
	var buf bytes.Buffer
	if err := a.f.frozen().writeTo(&buf); err != nil {
		t.Fatal(err)
	}
	b := newFSM(hclog.NewNullLogger())
	if err := b.Restore(io.NopCloser(&buf)); err != nil {
		t.Fatal(err)
	}
	for _, env := range []string{"", "dev"} {
		if _, ok := b.changes(env, at); ok {
			t.Errorf("%q's restored journal reaches before the snapshot", env)
		}
		if got, ok := b.changes(env, at+2); !ok || len(got) != 0 {
			t.Errorf("%q's restored journal at the snapshot's index: %+v, %v; want nothing changed", env, got, ok)
		}
	}
}
