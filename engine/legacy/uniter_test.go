package legacy

import (
	"reflect"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
)

// membersHook appends the hook, its remote unit and what relation-list
// answers for db:3 to the unit's trace.
const membersHook = `printf '%s %s: %s\n' "$JUJU_HOOK_NAME" "${JUJU_REMOTE_UNIT:--}" "$(relation-list -r db:3 --format=json)" >> "$FIXPOINT_UNIT_DIR/trace"`

// TestRelationListShowsOnlyJoinedUnits: relation-list answers the unit's
// view of the relation, as Juju's does: a member is listed from its
// -relation-joined on (in that hook too), not before, and no longer in or
// after its -relation-departed, whether or not the charm has those hooks.
func TestRelationListShowsOnlyJoinedUnits(t *testing.T) {
	forEachShell(t, func(t *testing.T, shell func(*Options)) {
		// The hooks that print; joined and departed of db/0 are missing
		// and still count.
		hooks := map[string]string{}
		for _, h := range []string{"install", "start", "db-relation-created", "db-relation-changed", "db-relation-broken"} {
			hooks[h] = membersHook
		}
		charm := writeCharm(t, hooks)
		u := testUniverse()
		u.Events = []charmapi.Event{
			ev("install", "", "", "", ""),
			ev("db-relation-created", "db:3", "", "db", ""),
			ev("start", "", "", "", ""),
			ev("db-relation-joined", "db:3", "db/0", "db", ""),
			ev("db-relation-changed", "db:3", "db/0", "db", ""),
			ev("db-relation-joined", "db:3", "db/1", "db", ""),
			ev("db-relation-changed", "db:3", "db/1", "db", ""),
		}
		_, _, unitDir, err := runHooks(t, charm, u, shell)
		if err != nil {
			t.Fatal(err)
		}
		equalLines(t, "relation-list on a first call", trace(t, unitDir), []string{
			"install -: []",
			"db-relation-created -: []",
			"start -: []",
			`db-relation-changed db/0: ["db/0"]`,
			`db-relation-changed db/1: ["db/0","db/1"]`,
		})

		// A later call: db/1 has left (its settings kept as departed)
		// and db/2 joins; db/1 is a member until its departed hook.
		hooks["db-relation-joined"] = membersHook
		hooks["db-relation-departed"] = membersHook
		hooks["config-changed"] = membersHook
		u = testUniverse()
		r := &u.Relations[1]
		r.Departed = map[string]map[string]string{"db/1": r.Units["db/1"]}
		r.Units = map[string]map[string]string{"db/0": r.Units["db/0"], "db/2": {}}
		u.Events = []charmapi.Event{
			ev("config-changed", "", "", "", ""),
			ev("db-relation-departed", "db:3", "db/1", "db", "db/1"),
			ev("db-relation-joined", "db:3", "db/2", "db", ""),
			ev("db-relation-changed", "db:3", "db/2", "db", ""),
		}
		charm = writeCharm(t, hooks)
		_, _, unitDir, err = runHooks(t, charm, u, shell)
		if err != nil {
			t.Fatal(err)
		}
		equalLines(t, "relation-list as members come and go", trace(t, unitDir), []string{
			`config-changed -: ["db/0","db/1"]`,
			`db-relation-departed db/1: ["db/0"]`,
			`db-relation-joined db/2: ["db/0","db/2"]`,
			`db-relation-changed db/2: ["db/0","db/2"]`,
		})
	})
}

// TestRelationListOfARelationGoneDepartsOneByOne: when the relation is gone
// from the universe, its departed hooks still list the members that have
// not departed yet, and broken lists none.
func TestRelationListOfARelationGoneDepartsOneByOne(t *testing.T) {
	hook := `printf '%s %s: %s\n' "$JUJU_HOOK_NAME" "${JUJU_REMOTE_UNIT:--}" "$(relation-list --format=json)" >> "$FIXPOINT_UNIT_DIR/trace"`
	charm := writeCharm(t, map[string]string{"old-relation-departed": hook, "old-relation-broken": hook})
	u := testUniverse()
	u.Events = []charmapi.Event{
		ev("old-relation-departed", "old:9", "logs/0", "logs", "logs/0"),
		ev("old-relation-departed", "old:9", "logs/1", "logs", "logs/1"),
		ev("old-relation-broken", "old:9", "", "logs", ""),
	}
	_, _, unitDir, err := runHooks(t, charm, u)
	if err != nil {
		t.Fatal(err)
	}
	equalLines(t, "relation-list of a relation gone", trace(t, unitDir), []string{
		`old-relation-departed logs/0: ["logs/1"]`,
		`old-relation-departed logs/1: []`,
		`old-relation-broken -: []`,
	})
}

// statusHook appends the hook and what status-get answers to the trace.
const statusHook = `printf '%s: %s\n' "$JUJU_HOOK_NAME" "$(status-get --include-data --format=json)" >> "$FIXPOINT_UNIT_DIR/trace"`

// TestStatusIsUnknownAfterStartWithoutStatusSet: as Juju's uniter does, a
// unit whose charm sets no status is "maintenance: installing charm
// software" during install and "unknown" once start has run (or been
// skipped); the result carries it, and status-get agrees.
func TestStatusIsUnknownAfterStartWithoutStatusSet(t *testing.T) {
	firstRun := []charmapi.Event{ev("install", "", "", "", ""), ev("config-changed", "", "", "", ""), ev("start", "", "", "", ""),
		ev("db-relation-joined", "db:3", "db/1", "db", "")}
	forEachShell(t, func(t *testing.T, shell func(*Options)) {
		hooks := map[string]string{"install": statusHook, "config-changed": statusHook, "db-relation-joined": statusHook}
		u := testUniverse()
		u.Events = firstRun
		// The status the model gives a unit that never ran.
		waiting := func(o *Options) { o.Status = &charmapi.Status{State: "waiting", Message: "installing"} }
		res, _, unitDir, err := runHooks(t, writeCharm(t, hooks), u, shell, waiting)
		if err != nil {
			t.Fatal(err)
		}
		equalLines(t, "status-get", trace(t, unitDir), []string{
			`install: {"message":"installing charm software","status":"maintenance","status-data":{}}`,
			`config-changed: {"message":"installing charm software","status":"maintenance","status-data":{}}`,
			`db-relation-joined: {"message":"","status":"unknown","status-data":{}}`,
		})
		if res.Status == nil || *res.Status != (charmapi.Status{State: "unknown"}) {
			t.Errorf("result status = %+v; want unknown", res.Status)
		}
	})
	t.Run("set by the charm", func(t *testing.T) {
		charm := writeCharm(t, map[string]string{"install": `status-set waiting "fetching"`, "start": statusHook})
		u := testUniverse()
		u.Events = firstRun
		res, _, unitDir, err := runHooks(t, charm, u)
		if err != nil {
			t.Fatal(err)
		}
		equalLines(t, "status-get in start", trace(t, unitDir), []string{`start: {"message":"fetching","status":"waiting","status-data":{}}`})
		if !reflect.DeepEqual(res.Status, &charmapi.Status{State: "waiting", Message: "fetching"}) {
			t.Errorf("result status = %+v; want the charm's", res.Status)
		}
	})
	t.Run("later calls", func(t *testing.T) {
		charm := writeCharm(t, map[string]string{"config-changed": statusHook})
		u := testUniverse()
		u.Events = []charmapi.Event{ev("config-changed", "", "", "", "")}
		res, _, unitDir, err := runHooks(t, charm, u, func(o *Options) { o.Status = &charmapi.Status{State: "unknown"} })
		if err != nil {
			t.Fatal(err)
		}
		equalLines(t, "status-get after start", trace(t, unitDir), []string{`config-changed: {"message":"","status":"unknown","status-data":{}}`})
		if res.Status != nil {
			t.Errorf("a call without start set status %+v", res.Status)
		}
	})
}

// TestStopAndRemoveStatus: as Juju's uniter, a dying unit is
// "maintenance: stopping charm software" in its stop hook and
// "maintenance: cleaning up prior to charm deletion" in its remove hook,
// whatever it set before; a status-set in stop holds until remove.
func TestStopAndRemoveStatus(t *testing.T) {
	teardown := []charmapi.Event{ev("stop", "", "", "", ""), ev("remove", "", "", "", "")}
	forEachShell(t, func(t *testing.T, shell func(*Options)) {
		charm := writeCharm(t, map[string]string{"stop": statusHook + "\nstatus-set blocked \"stopped\"", "remove": statusHook})
		u := testUniverse()
		u.Life, u.Relations, u.Events = "dying", nil, teardown
		active := func(o *Options) { o.Status = &charmapi.Status{State: "active", Message: "serving"} }
		res, _, unitDir, err := runHooks(t, charm, u, shell, active)
		if err != nil {
			t.Fatal(err)
		}
		equalLines(t, "status-get", trace(t, unitDir), []string{
			`stop: {"message":"stopping charm software","status":"maintenance","status-data":{}}`,
			`remove: {"message":"cleaning up prior to charm deletion","status":"maintenance","status-data":{}}`,
		})
		if want := (charmapi.Status{State: "maintenance", Message: "cleaning up prior to charm deletion"}); res.Status == nil || *res.Status != want {
			t.Errorf("result status = %+v; want %+v", res.Status, want)
		}
	})
}
