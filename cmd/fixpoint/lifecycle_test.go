package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

// stateOf reads the replicated state from the up running on data.
func stateOf(t *testing.T, data string) *model.State {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(data, endpointFile))
	if err != nil {
		t.Fatal(err)
	}
	var e endpoint
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatalf("%s: %v", endpointFile, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := api.NewClient([]string{e.Addr}, e.Token, nil).State(ctx, false)
	if err != nil {
		t.Fatalf("GET /v1/state: %v", err)
	}
	return st
}

// unitJournal returns every universe a unit's hook was given, in order: the
// lifecycle charms append each one to universes.jsonl in the unit's
// directory, which outlives the unit.
func unitJournal(t *testing.T, data, unit string) []charmapi.Universe {
	t.Helper()
	path := filepath.Join(data, "agent", "units", strings.ReplaceAll(unit, "/", "-"), "universes.jsonl")
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []charmapi.Universe
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var u charmapi.Universe
		if err := json.Unmarshal(sc.Bytes(), &u); err != nil {
			t.Fatalf("%s line %d: %v\n%s", path, len(out)+1, err, sc.Bytes())
		}
		out = append(out, u)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// lastUniverse returns the last universe a unit reconciled.
func lastUniverse(t *testing.T, data, unit string) charmapi.Universe {
	t.Helper()
	j := unitJournal(t, data, unit)
	if len(j) == 0 {
		t.Fatalf("%s never reconciled", unit)
	}
	return j[len(j)-1]
}

// universeRelation returns the relation with id in a universe, or nil.
func universeRelation(u charmapi.Universe, id int) *charmapi.Relation {
	for i := range u.Relations {
		if u.Relations[i].ID == id {
			return &u.Relations[i]
		}
	}
	return nil
}

// eventHooks lists a universe's event hook names.
func eventHooks(u charmapi.Universe) []string {
	var out []string
	for _, e := range u.Events {
		out = append(out, e.Hook)
	}
	return out
}

// universeHasEvent reports whether a universe carries the event hook on relation
// ident ("" for any).
func universeHasEvent(u charmapi.Universe, hook, ident string) bool {
	for _, e := range u.Events {
		if e.Hook == hook && (ident == "" || e.Relation == ident) {
			return true
		}
	}
	return false
}

func universeRemoteUnits(r *charmapi.Relation) []string {
	if r == nil {
		return nil
	}
	var out []string
	for n := range r.Units {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return model.UnitLess(out[i], out[j]) })
	return out
}

func unitNamesOf(st *engine.Status) []string {
	var out []string
	for n := range st.Units {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return model.UnitLess(out[i], out[j]) })
	return out
}

// stateRelationIDs maps each relation key in the state to its id.
func stateRelationIDs(st *model.State) map[model.RelationKey]int {
	out := map[model.RelationKey]int{}
	for id, r := range st.Relations {
		out[r.Key] = id
	}
	return out
}

// planLine turns an expected plan line into a pattern: <hash> stands for
// a short charm hash, everything else is literal.
func planLine(want string) *regexp.Regexp {
	parts := strings.Split(want, "<hash>")
	for i := range parts {
		parts[i] = regexp.QuoteMeta(parts[i])
	}
	return regexp.MustCompile("^" + strings.Join(parts, "[0-9a-f]{12}") + "$")
}

// matchChanges checks that out lists exactly the wanted changes, in order,
// among lines that look like changes (starting with "+ ", "- " or "~ ").
func matchChanges(t *testing.T, what, out string, want []string) {
	t.Helper()
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "+ ") || strings.HasPrefix(l, "- ") || strings.HasPrefix(l, "~ ") {
			got = append(got, l)
		}
	}
	ok := len(got) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = planLine(want[i]).MatchString(got[i])
	}
	if !ok {
		t.Fatalf("%s lists the changes\n  %s\nwant\n  %s\nfull output:\n%s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "), out)
	}
}

var appliedAt = regexp.MustCompile(`(?m)^applied at index (\d+)$`)

// lifecycleWalk drives one running up through the steps under
// testdata/lifecycle.
type lifecycleWalk struct {
	t    *testing.T
	data string
	// before holds each unit's journal length before the current step.
	before map[string]int
}

func (l *lifecycleWalk) env(step int) string {
	return repo("testdata", "lifecycle", fmt.Sprintf("step%d.cue", step))
}

// step plans stepN (exit 2, exactly the wanted changes), applies it with
// --wait (exit 0, the same changes, at the fixed point), plans it again
// (exit 0, no changes), and returns the converged status and the state.
func (l *lifecycleWalk) step(n int, want []string) (*engine.Status, *model.State) {
	t := l.t
	t.Helper()
	l.before = map[string]int{}
	ents, _ := os.ReadDir(filepath.Join(l.data, "agent", "units"))
	for _, e := range ents {
		unit := e.Name()
		if i := strings.LastIndexByte(unit, '-'); i >= 0 {
			unit = unit[:i] + "/" + unit[i+1:]
		}
		l.before[unit] = len(unitJournal(t, l.data, unit))
	}
	env := l.env(n)
	prevEnv := stateOf(t, l.data).EnvIndex

	r := fixpoint(t, 2*time.Minute, "plan", "-f", env, "--data-dir", l.data)
	if r.code != exitChanges {
		t.Fatalf("step %d: plan exited %d, want %d (changes)\nstdout:\n%s\nstderr:\n%s", n, r.code, exitChanges, r.stdout, r.stderr)
	}
	matchChanges(t, fmt.Sprintf("step %d: plan", n), r.stdout, want)
	if wantTail := fmt.Sprintf("%d change(s) against index %d", len(want), prevEnv); !strings.Contains(r.stdout, wantTail) {
		t.Errorf("step %d: plan does not end with %q:\n%s", n, wantTail, r.stdout)
	}

	r = fixpoint(t, 4*time.Minute, "apply", "-f", env, "--yes", "--wait", "--timeout", "3m", "--data-dir", l.data)
	if r.code != exitOK {
		t.Fatalf("step %d: apply --wait exited %d\nstdout:\n%s\nstderr:\n%s", n, r.code, r.stdout, r.stderr)
	}
	matchChanges(t, fmt.Sprintf("step %d: apply", n), r.stdout, want)
	m := appliedAt.FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("step %d: apply does not say where it applied:\n%s", n, r.stdout)
	}
	applied, _ := strconv.ParseUint(m[1], 10, 64)

	st := statusJSON(t, l.data)
	if !st.Converged || st.Index < applied {
		t.Fatalf("step %d: status after apply --wait: converged %v at index %d, applied at %d", n, st.Converged, st.Index, applied)
	}
	for name, u := range st.Units {
		if u.Phase != engine.Settled || u.Life != string(model.Alive) || u.Error != "" || u.Status.State != "active" {
			t.Errorf("step %d: %s is %s/%s (%s: %q) %s", n, name, u.Life, u.Phase, u.Status.State, u.Status.Message, u.Error)
		}
	}
	state := stateOf(t, l.data)
	if state.EnvIndex != applied {
		t.Errorf("step %d: env_index %d, want %d (where apply applied)", n, state.EnvIndex, applied)
	}
	for id, r := range state.Relations {
		if r.Life != model.Alive {
			t.Errorf("step %d: relation %d (%s) is still %s at the fixed point", n, id, r.Key, r.Life)
		}
	}
	for name, s := range state.Services {
		if s.Life != model.Alive {
			t.Errorf("step %d: service %s is still %s at the fixed point", n, name, s.Life)
		}
	}

	r = fixpoint(t, 2*time.Minute, "plan", "-f", env, "--data-dir", l.data)
	if r.code != exitOK || !strings.Contains(r.stdout, fmt.Sprintf("no changes (environment at index %d)", applied)) {
		t.Fatalf("step %d: plan after apply exited %d:\n%s%s", n, r.code, r.stdout, r.stderr)
	}
	return st, state
}

// since returns the universes unit was given during the current step.
func (l *lifecycleWalk) since(unit string) []charmapi.Universe {
	return unitJournal(l.t, l.data, unit)[l.before[unit]:]
}

// checkStatusUnits checks that status lists exactly the wanted units.
func checkStatusUnits(t *testing.T, step int, st *engine.Status, want ...string) {
	t.Helper()
	if got := unitNamesOf(st); !slices.Equal(got, want) {
		t.Fatalf("step %d: units %v, want %v", step, got, want)
	}
}

// checkUniverseSees checks that unit's last universe shows exactly the remote
// units over the relation with id, each with the wanted settings.
func checkUniverseSees(t *testing.T, step int, data, unit string, id int, want map[string]map[string]string) {
	t.Helper()
	u := lastUniverse(t, data, unit)
	r := universeRelation(u, id)
	if r == nil {
		t.Fatalf("step %d: %s's last universe lacks relation %d: %+v", step, unit, id, u.Relations)
	}
	var wantUnits []string
	for n := range want {
		wantUnits = append(wantUnits, n)
	}
	sort.Slice(wantUnits, func(i, j int) bool { return model.UnitLess(wantUnits[i], wantUnits[j]) })
	if got := universeRemoteUnits(r); !slices.Equal(got, wantUnits) {
		t.Fatalf("step %d: %s sees %v over %s, want %v", step, unit, got, r.Ident, wantUnits)
	}
	for n, kv := range want {
		for k, v := range kv {
			if got := r.Units[n][k]; got != v {
				t.Errorf("step %d: %s sees %s's %s=%q over %s, want %q", step, unit, n, k, got, r.Ident, v)
			}
		}
	}
}

// checkDied checks that a unit is gone from the state and that the last
// universe it was given, during this step, was its teardown: life dying,
// no relations, ending in stop and remove.
func (l *lifecycleWalk) checkDied(step int, state *model.State, unit string) {
	t := l.t
	t.Helper()
	if _, ok := state.Units[unit]; ok {
		t.Errorf("step %d: %s is still in the state", step, unit)
	}
	got := l.since(unit)
	if len(got) == 0 {
		t.Fatalf("step %d: %s got no last reconcile before it was removed", step, unit)
	}
	u := got[len(got)-1]
	h := eventHooks(u)
	if u.Life != string(model.Dying) || len(u.Relations) != 0 || len(h) < 2 || h[len(h)-2] != "stop" || h[len(h)-1] != "remove" {
		t.Errorf("step %d: %s's last universe: life %q, %d relations, events %v; want dying, none, ... stop remove", step, unit, u.Life, len(u.Relations), h)
	}
	for _, earlier := range unitJournal(t, l.data, unit)[:l.before[unit]] {
		if earlier.Life != string(model.Alive) {
			t.Errorf("step %d: %s was given life %q before it was removed", step, unit, earlier.Life)
		}
	}
}

// checkLostRelation checks that unit was reconciled during this step
// without relation id, having been told it broke, and no longer sees it.
func (l *lifecycleWalk) checkLostRelation(step int, unit string, id int, ident string) {
	t := l.t
	t.Helper()
	got := l.since(unit)
	if len(got) == 0 {
		t.Fatalf("step %d: %s was not reconciled after relation %d went", step, unit, id)
	}
	if r := universeRelation(got[len(got)-1], id); r != nil {
		t.Fatalf("step %d: %s's last universe still has relation %s", step, unit, r.Ident)
	}
	broke := false
	for _, u := range got {
		broke = broke || universeHasEvent(u, strings.Split(ident, ":")[0]+"-relation-broken", ident)
	}
	if !broke {
		t.Errorf("step %d: %s was never told %s broke; universes since the change had events %v", step, unit, ident, eventHooks(got[len(got)-1]))
	}
}

// TestLifecycle walks one environment through its whole life on one
// running up: initial deploy, scale up, scale down, scale up again, config
// change, relation removal, service removal and charm upgrade. Each step
// is planned (exit 2 and the exact changes), applied with --wait (exit 0 at
// the fixed point) and planned again (exit 0); status, the replicated
// state and what each unit's hook was given are checked after it.
func TestLifecycle(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	var up *upProc
	// Registered first, so it runs after up is killed and its output is
	// complete.
	t.Cleanup(func() {
		if t.Failed() && up != nil {
			t.Logf("up output:\n%s", up.out)
		}
	})
	up = startUp(t, data, repo("testdata", "lifecycle", "step0.cue"))
	up.waitConverged(t, converges)
	l := &lifecycleWalk{t: t, data: data}

	// The running environment is step 0, empty.
	if r := fixpoint(t, time.Minute, "plan", "-f", l.env(0), "--data-dir", data); r.code != exitOK {
		t.Fatalf("plan of the running environment exited %d:\n%s%s", r.code, r.stdout, r.stderr)
	}

	// 1. Initial deploy.
	st, state := l.step(1, []string{
		"+ service app (charm <hash>)",
		"+ units app/0, app/1",
		"+ service extra (charm <hash>)",
		"+ units extra/0",
		"+ service store (charm <hash>)",
		"+ units store/0, store/1",
		"+ service tail (charm <hash>)",
		"+ relation app:data store:data (app-store)",
		"+ relation app:juju-info tail:host (app-tail)",
		"+ relation app:mesh (peer)",
		"+ relation extra:data store:data (extra-store)",
		"+ relation extra:mesh (peer)",
		"+ relation store:ring (peer)",
	})
	checkStatusUnits(t, 1, st, "app/0", "app/1", "extra/0", "store/0", "store/1", "tail/0", "tail/1")
	ids := stateRelationIDs(state)
	appStore, extraStore := ids["app:data store:data"], ids["extra:data store:data"]
	appTail, extraMesh, ring := ids["app:juju-info tail:host"], ids["extra:mesh"], ids["store:ring"]
	if len(ids) != 6 {
		t.Fatalf("step 1: relations %v, want 6", ids)
	}
	oldStore := map[string]string{"config": "greeting:hello size:5", "version": "v1"}
	for _, unit := range []string{"app/0", "app/1"} {
		checkUniverseSees(t, 1, data, unit, appStore, map[string]map[string]string{"store/0": oldStore, "store/1": oldStore})
	}
	checkUniverseSees(t, 1, data, "extra/0", extraStore, map[string]map[string]string{"store/0": oldStore, "store/1": oldStore})
	checkUniverseSees(t, 1, data, "store/0", ring, map[string]map[string]string{"store/1": {"unit": "store/1"}})
	for _, pair := range [][2]string{{"tail/0", "app/0"}, {"tail/1", "app/1"}} {
		// A subordinate sees only the principal it is attached to.
		checkUniverseSees(t, 1, data, pair[0], appTail, map[string]map[string]string{pair[1]: {"unit": pair[1]}})
		if p := state.Units[pair[0]].Principal; p != pair[1] {
			t.Errorf("step 1: %s is attached to %q, want %s", pair[0], p, pair[1])
		}
	}
	for _, unit := range unitNamesOf(st) {
		if h := eventHooks(unitJournal(t, data, unit)[0]); len(h) == 0 || h[0] != "install" {
			t.Errorf("step 1: %s's first universe has events %v, want install first", unit, h)
		}
	}

	// 2. Scale up: store/2 joins; both sides see it.
	st, _ = l.step(2, []string{"+ units store/2"})
	checkStatusUnits(t, 2, st, "app/0", "app/1", "extra/0", "store/0", "store/1", "store/2", "tail/0", "tail/1")
	for _, unit := range []string{"app/0", "app/1"} {
		checkUniverseSees(t, 2, data, unit, appStore, map[string]map[string]string{"store/0": oldStore, "store/1": oldStore, "store/2": oldStore})
	}
	checkUniverseSees(t, 2, data, "store/2", appStore, map[string]map[string]string{"app/0": {"unit": "app/0"}, "app/1": {"unit": "app/1"}})
	checkUniverseSees(t, 2, data, "store/0", ring, map[string]map[string]string{"store/1": {}, "store/2": {}})

	// 3. Scale down: the newest units go dying, get a last reconcile
	// with life dying, and are removed; the subordinate on app/1 goes
	// with it. The survivors see them depart.
	st, state = l.step(3, []string{
		"- units app/1 (go dying)",
		"- units store/1, store/2 (go dying)",
		"- units tail/1 (go dying: subordinate to app/1)",
	})
	checkStatusUnits(t, 3, st, "app/0", "extra/0", "store/0", "tail/0")
	for _, unit := range []string{"app/1", "store/1", "store/2", "tail/1"} {
		l.checkDied(3, state, unit)
	}
	checkUniverseSees(t, 3, data, "app/0", appStore, map[string]map[string]string{"store/0": oldStore})
	checkUniverseSees(t, 3, data, "store/0", appStore, map[string]map[string]string{"app/0": {"unit": "app/0"}})
	checkUniverseSees(t, 3, data, "store/0", ring, map[string]map[string]string{})
	if !slices.ContainsFunc(l.since("store/0"), func(u charmapi.Universe) bool {
		return universeHasEvent(u, "ring-relation-departed", fmt.Sprintf("ring:%d", ring))
	}) {
		t.Errorf("step 3: store/0 was never told its peers departed")
	}

	// 4. Scale up again: unit numbers are never reused.
	st, _ = l.step(4, []string{"+ units store/3"})
	checkStatusUnits(t, 4, st, "app/0", "extra/0", "store/0", "store/3", "tail/0")
	checkUniverseSees(t, 4, data, "app/0", appStore, map[string]map[string]string{"store/0": oldStore, "store/3": oldStore})
	if n := len(unitJournal(t, data, "store/1")); n != l.before["store/1"] {
		t.Errorf("step 4: the removed store/1 ran again")
	}

	// 5. Config change: greeting is set, size goes back to its default;
	// the units see the new config whole, and so do their peers.
	st, state = l.step(5, []string{
		`~ service store config greeting: "hello" -> "bonjour"`,
		`~ service store config size: 5 -> 1`,
	})
	newStore := map[string]string{"config": "greeting:bonjour size:1", "version": "v1"}
	for _, unit := range []string{"store/0", "store/3"} {
		u := lastUniverse(t, data, unit)
		if got, _ := json.Marshal(u.Config); string(got) != `{"greeting":"bonjour","size":1}` {
			t.Errorf("step 5: %s's config is %s", unit, got)
		}
		if !slices.ContainsFunc(l.since(unit), func(u charmapi.Universe) bool { return universeHasEvent(u, "config-changed", "") }) {
			t.Errorf("step 5: %s was not told its config changed", unit)
		}
		if msg := st.Units[unit].Status.Message; msg != "v1 greeting:bonjour size:1" {
			t.Errorf("step 5: %s reports %q", unit, msg)
		}
	}
	if got, _ := json.Marshal(state.Services["store"].Config); string(got) != `{"greeting":"bonjour","size":1}` {
		t.Errorf("step 5: the state holds store's config %s", got)
	}
	checkUniverseSees(t, 5, data, "app/0", appStore, map[string]map[string]string{"store/0": newStore, "store/3": newStore})
	checkUniverseSees(t, 5, data, "extra/0", extraStore, map[string]map[string]string{"store/0": newStore, "store/3": newStore})

	// 6. Relation removal: both sides get a last reconcile without it,
	// and it disappears from the state.
	_, state = l.step(6, []string{fmt.Sprintf("- relation extra:data store:data (id %d)", extraStore)})
	if r, ok := state.Relations[extraStore]; ok {
		t.Errorf("step 6: relation %d is still in the state: %+v", extraStore, r)
	}
	l.checkLostRelation(6, "extra/0", extraStore, fmt.Sprintf("data:%d", extraStore))
	for _, unit := range []string{"store/0", "store/3"} {
		l.checkLostRelation(6, unit, extraStore, fmt.Sprintf("data:%d", extraStore))
		checkUniverseSees(t, 6, data, unit, appStore, map[string]map[string]string{"app/0": {"unit": "app/0"}})
	}
	for _, u := range state.Units {
		if u.Settings.Get(extraStore) != nil {
			t.Errorf("step 6: %s still holds settings for the removed relation", u.Name)
		}
	}

	// 7. Service removal: extra's unit dies, its peer relation goes, and
	// the service disappears.
	st, state = l.step(7, []string{
		"- service extra (units go dying: extra/0)",
		fmt.Sprintf("- relation extra:mesh (id %d)", extraMesh),
	})
	checkStatusUnits(t, 7, st, "app/0", "store/0", "store/3", "tail/0")
	l.checkDied(7, state, "extra/0")
	if _, ok := st.Services["extra"]; ok {
		t.Errorf("step 7: status still lists service extra")
	}
	if _, ok := state.Services["extra"]; ok {
		t.Errorf("step 7: service extra is still in the state")
	}
	for id, r := range state.Relations {
		if _, ok := r.Endpoint("extra"); ok {
			t.Errorf("step 7: relation %d (%s) of the removed service is still in the state", id, r.Key)
		}
	}

	// 8. Charm upgrade: the new content hash reaches the unit, its hook
	// sees it (with upgrade-charm) and runs the new code, whose output
	// the related units see; the old charm is no longer kept.
	oldCharm := state.Services["app"].Charm
	st, state = l.step(8, []string{"~ service app charm <hash> -> <hash>"})
	newCharm := st.Services["app"].Charm
	if newCharm == oldCharm || newCharm != state.Services["app"].Charm || len(newCharm) != 64 {
		t.Fatalf("step 8: app's charm is %q (status) / %q (state), was %q", newCharm, state.Services["app"].Charm, oldCharm)
	}
	r := fixpoint(t, time.Minute, "status", "--data-dir", data)
	if !strings.Contains(r.stdout, "(charm "+newCharm[:12]+", alive)") {
		t.Errorf("step 8: status table does not show the new charm %s:\n%s", newCharm[:12], r.stdout)
	}
	app := lastUniverse(t, data, "app/0")
	if app.Charm != newCharm || !universeHasEvent(app, "upgrade-charm", "") {
		t.Errorf("step 8: app/0's hook was given charm %s with events %v; want %s with upgrade-charm", app.Charm, eventHooks(app), newCharm)
	}
	if msg := st.Units["app/0"].Status.Message; msg != "v2 mode:fast" {
		t.Errorf("step 8: app/0 reports %q, want the new hook's %q", msg, "v2 mode:fast")
	}
	for _, unit := range []string{"store/0", "store/3"} {
		checkUniverseSees(t, 8, data, unit, appStore, map[string]map[string]string{"app/0": {"version": "v2"}})
	}
	checkUniverseSees(t, 8, data, "tail/0", appTail, map[string]map[string]string{"app/0": {"version": "v2"}})
	if _, ok := state.Charms[oldCharm]; ok {
		t.Errorf("step 8: the old charm %s is still kept though nothing uses it", oldCharm[:12])
	}
	if got := slices.Sorted(maps.Keys(state.Units)); !slices.Equal(got, []string{"app/0", "store/0", "store/3", "tail/0"}) {
		t.Errorf("step 8: units in the state: %v", got)
	}
	up.stop(t)
}
