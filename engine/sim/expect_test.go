package sim

import (
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/model"
)

// TestSimulateExpectations: the report prints every unit's final status;
// a fixed point that meets the services' expectations is OK, and one that
// does not fails, naming each unit that misses with what it ended with.
func TestSimulateExpectations(t *testing.T) {
	env := serverClient(1, 2)
	env.services["client"].Expect(model.Expect{Status: "active"})
	rep := converges(t, env, Options{Schedules: 4, Seed: 1})
	out := rep.String()
	for _, want := range []string{"final status at the fixed point:\n", "client/1  active: using http://127.0.0.1:8080\n", "expectations met"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}

	wrong := "ready"
	env = serverClient(1, 2)
	env.services["client"].Expect(model.Expect{Status: "active", Message: &wrong})
	env.services["server"].Expect(model.Expect{Status: "blocked"})
	rep, err := env.Simulate(t.Context(), Options{Schedules: 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || len(rep.Unmet) != 3 || rep.Converged() != 4 || len(rep.FixedPoints) != 1 {
		t.Fatalf("unmet expectations: OK %v, unmet %d:\n%s", rep.OK(), len(rep.Unmet), rep)
	}
	out = rep.String()
	for _, want := range []string{"expectations not met", `client/0 ends active: using http://127.0.0.1:8080; expected active: ready (message "ready" exactly)`, "server/0 ends ", "; expected blocked", "FAIL\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}
