package legacy

import (
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/hashicorp/go-hclog"
)

// TestJujuReboot: juju-reboot asks for the machine's reboot in the result
// and the run goes on; --now kills the hook at once and no later hook
// runs, as Juju's machine goes down with it; an action may not reboot.
func TestJujuReboot(t *testing.T) {
	forEachShell(t, func(t *testing.T, shell func(*Options)) {
		rec := `echo "$JUJU_HOOK_NAME" >> "$FIXPOINT_UNIT_DIR/trace"`
		charm := writeCharm(t, map[string]string{
			"config-changed": rec + `; relation-set -r db:3 before=reboot; juju-reboot; echo "queued" >> "$FIXPOINT_UNIT_DIR/trace"`,
			"start":          rec,
		})
		u := testUniverse()
		u.Events = []charmapi.Event{ev("config-changed", "", "", "", ""), ev("start", "", "", "", "")}
		res, _, unitDir, err := runHooks(t, charm, u, shell)
		if err != nil {
			t.Fatal(err)
		}
		equalLines(t, "hooks around a queued reboot", trace(t, unitDir), []string{"config-changed", "queued", "start"})
		if !res.Reboot || res.Relations["db:3"].Local["before"] != "reboot" {
			t.Errorf("result = %+v; want the reboot and the hook's writes", res)
		}

		charm = writeCharm(t, map[string]string{
			"config-changed": rec + `; juju-reboot --now; sleep 30; echo "not killed" >> "$FIXPOINT_UNIT_DIR/trace"`,
			"start":          rec,
		})
		res, stats, unitDir, err := runHooks(t, charm, u, shell)
		if err != nil {
			t.Fatal(err)
		}
		equalLines(t, "hooks around juju-reboot --now", trace(t, unitDir), []string{"config-changed"})
		if !res.Reboot || stats.HooksRun != 1 {
			t.Errorf("result %+v, %d hooks run; want the reboot, and no hook after the killed one", res, stats.HooksRun)
		}
	})
	s := secretSession(t, testUniverse())
	s.action = newActionContext(map[string]any{}, hclog.NewNullLogger())
	if r := s.call(&request{Context: "ctx", Tool: "juju-reboot"}); r.Code != 1 || r.Stderr != "ERROR juju-reboot is not supported when running an action\n" {
		t.Errorf("juju-reboot in an action: %+v", r)
	}
}

// TestHookcmdsRebootFromConfigChanged is test_hookcmds.py's
// test_juju_reboot_queues_reboot up to the reboot: canonical/operator's
// charm calls juju_reboot() from config-changed once reboot-trigger asks,
// and the run's result asks for the reboot; after it the unit runs stop
// and start (the engine's part), and the charm does not ask again.
func TestHookcmdsRebootFromConfigChanged(t *testing.T) {
	charm := conformanceCharm(t, "test_hookcmds")
	u := hookcmdsUniverse()
	u.Config["reboot-trigger"] = "reboot-please"
	u.Events = []charmapi.Event{ev("config-changed", "", "", "", "")}
	unitDir := t.TempDir()
	opts := func(o *Options) { o.UnitDir = unitDir }
	res, _, _, err := runHooks(t, charm, u, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Reboot {
		t.Fatalf("result = %+v; want the reboot juju_reboot() asked for", res)
	}
	u.Boot = 1
	u.Events = []charmapi.Event{ev("stop", "", "", "", ""), ev("start", "", "", "", ""), ev("config-changed", "", "", "", "")}
	res, stats, _, err := runHooks(t, charm, u, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Reboot || res.Status == nil || res.Status.State != "active" || stats.HooksRun != 3 {
		t.Errorf("after the reboot: result %+v, %d hooks; want active and no second reboot", res, stats.HooksRun)
	}
}
