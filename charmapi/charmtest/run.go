package charmtest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/sim"
)

// Result is a hook's result, decoded and checked against its universe as
// the engine checks it, with assertions that report key by key.
type Result struct {
	*sim.Outcome
	t testing.TB
}

// Try runs h once on u in the unit directory dir (created if missing) and
// returns its result, or the error the engine would put the unit in:
// the hook failed (exit status, panic, returned error, timeout) or its
// result breaks the contract (*engine.ResultError names the field).
func Try(ctx context.Context, h Hook, u *charmapi.Universe, dir string) (*Result, error) {
	o, err := sim.Try(ctx, h, u, dir)
	if err != nil {
		return nil, err
	}
	return &Result{Outcome: o}, nil
}

// Run runs h on u in a fresh unit directory and returns the result; a
// hook error or a bad result fails the test. It runs the hook a second
// time on the same universe, in the same directory, and fails the test if
// the results differ: a hook whose output is not a function of its
// universe (a timestamp, a random value, map order) never settles.
func Run(t testing.TB, h Hook, u *charmapi.Universe) *Result {
	t.Helper()
	dir := t.TempDir()
	res, err := Try(t.Context(), h, u, dir)
	if err != nil {
		t.Fatalf("%s on %s: %v", h, u.Unit, err)
	}
	again, err := Try(t.Context(), h, u, dir)
	if err != nil {
		t.Fatalf("%s on %s: the first run succeeded, a second run on the same universe failed: %v", h, u.Unit, err)
	}
	if d := sim.ResultChanges(res.Result, again.Result); len(d) > 0 {
		t.Fatalf("%s is not a function of its universe: two runs of %s on the same universe returned different results:\n%s\n%s",
			h, u.Unit, sim.FormatChanges(d), sim.NondeterminismHint)
	}
	res.t = t
	return res
}

// RunOnce is Run without the second run, for a hook known to differ
// between runs (to show that it does).
func RunOnce(t testing.TB, h Hook, u *charmapi.Universe) *Result {
	t.Helper()
	res, err := Try(t.Context(), h, u, t.TempDir())
	if err != nil {
		t.Fatalf("%s on %s: %v", h, u.Unit, err)
	}
	res.t = t
	return res
}

// Local returns what the result writes as the unit's settings in ident,
// or nil when it does not write them.
func (r *Result) Local(ident string) map[string]string { return r.Relations[ident].Local }

// App returns what the result writes as the application bag in ident, or
// nil.
func (r *Result) App(ident string) map[string]string { return r.Relations[ident].App }

func (r *Result) helper() testing.TB {
	if r.t == nil {
		panic("charmtest: Expect methods need a Result from Run or RunOnce")
	}
	r.t.Helper()
	return r.t
}

// ExpectLocal checks the unit's settings written to relation ident; a nil
// want means the result must not write them.
func (r *Result) ExpectLocal(ident string, want map[string]string) *Result {
	t := r.helper()
	t.Helper()
	expectBag(t, "relations."+ident+".local", r.Local(ident), want)
	return r
}

// ExpectApp checks the application bag written to relation ident; a nil
// want means the result must not write it.
func (r *Result) ExpectApp(ident string, want map[string]string) *Result {
	t := r.helper()
	t.Helper()
	expectBag(t, "relations."+ident+".app", r.App(ident), want)
	return r
}

// ExpectLocalKey checks one key of the unit's settings in ident.
func (r *Result) ExpectLocalKey(ident, key, want string) *Result {
	t := r.helper()
	t.Helper()
	got, ok := r.Local(ident)[key]
	if !ok {
		t.Errorf("relations.%s.local.%s is not set; want %q (local: %v)", ident, key, want, r.Local(ident))
	} else if got != want {
		t.Errorf("relations.%s.local.%s = %q; want %q", ident, key, got, want)
	}
	return r
}

// ExpectRelations checks that the result writes exactly the relations
// named by idents.
func (r *Result) ExpectRelations(idents ...string) *Result {
	t := r.helper()
	t.Helper()
	got := slices.Sorted(maps.Keys(r.Relations))
	want := slices.Clone(idents)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("result writes relations %v; want %v", got, want)
	}
	return r
}

// ExpectStatus checks the workload status.
func (r *Result) ExpectStatus(state, message string) *Result {
	t := r.helper()
	t.Helper()
	switch {
	case r.Status == nil:
		t.Errorf("no status; want %s %q", state, message)
	case r.Status.State != state || r.Status.Message != message:
		t.Errorf("status = %s %q; want %s %q", r.Status.State, r.Status.Message, state, message)
	}
	return r
}

// ExpectLeaderData checks the leader data written; nil means none.
func (r *Result) ExpectLeaderData(want map[string]string) *Result {
	t := r.helper()
	t.Helper()
	expectBag(t, "leader_data", r.LeaderData, want)
	return r
}

// ExpectState checks the private state written; nil means none.
func (r *Result) ExpectState(want map[string]string) *Result {
	t := r.helper()
	t.Helper()
	expectBag(t, "state", r.State, want)
	return r
}

// ExpectPorts checks the ports the result opens (nil: ports not written).
func (r *Result) ExpectPorts(want ...string) *Result {
	t := r.helper()
	t.Helper()
	if want == nil && r.Ports == nil {
		return r
	}
	if !slices.Equal(r.Ports, want) {
		t.Errorf("ports = %q; want %q", r.Ports, want)
	}
	return r
}

func expectBag(t testing.TB, field string, got, want map[string]string) {
	t.Helper()
	switch {
	case want == nil && got == nil:
		return
	case want == nil:
		t.Errorf("%s is written (%v); want it left alone", field, got)
		return
	case got == nil:
		t.Errorf("%s is not written; want %v", field, want)
		return
	}
	var lines []string
	keys := maps.Clone(got)
	maps.Copy(keys, want)
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		g, gok := got[k]
		w, wok := want[k]
		switch {
		case gok && !wok:
			lines = append(lines, fmt.Sprintf("  %s: %q is set, want it unset", k, g))
		case !gok && wok:
			lines = append(lines, fmt.Sprintf("  %s: unset, want %q", k, w))
		case g != w:
			lines = append(lines, fmt.Sprintf("  %s: %q, want %q", k, g, w))
		}
	}
	if len(lines) > 0 {
		t.Errorf("%s differs:\n%s", field, strings.Join(lines, "\n"))
	}
}
