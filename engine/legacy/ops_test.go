package legacy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// opsFramework finds Canonical's ops framework beside the checkout,
// shared/thirdparty/python-ops next to the repository (or next to a
// directory above it, for a git worktree); the ops charms' venv/ is a
// copy of it. "" when there is none.
func opsFramework(repoRoot string) string {
	dir, err := filepath.Abs(repoRoot)
	if err != nil {
		return ""
	}
	for i := 0; i < 3; i++ {
		dir = filepath.Dir(dir)
		fw := filepath.Join(dir, "shared", "thirdparty", "python-ops")
		if _, err := os.Stat(filepath.Join(fw, "ops", "__init__.py")); err == nil {
			return fw
		}
	}
	return ""
}

// OpsCharm copies the ops test charm testdata/ops/<name> to a temporary
// directory with the ops framework in venv/, as charmcraft packs it. It
// skips the test when the framework is not beside the checkout.
func opsCharm(t *testing.T, name string) string {
	t.Helper()
	fw := opsFramework(filepath.Join("..", ".."))
	if fw == "" {
		t.Skip("Canonical's ops framework is not beside the checkout (../shared/thirdparty/python-ops): ops charms cannot run")
	}
	dir := filepath.Join(t.TempDir(), name)
	for _, cp := range [][2]string{{filepath.Join("..", "..", "testdata", "ops", name), dir}, {fw, filepath.Join(dir, "venv")}} {
		if out, err := exec.Command("cp", "-a", cp[0], cp[1]).CombinedOutput(); err != nil {
			t.Fatalf("cp %s: %v\n%s", cp[0], err, out)
		}
	}
	return dir
}

// TestOpsCharmRunsUnderTheAdapter runs the ops-db charm's first call as the
// leader of a service with a client: ops dispatches each event, and what
// it set through the hook tools is the result.
func TestOpsCharmRunsUnderTheAdapter(t *testing.T) {
	charm := opsCharm(t, "ops-db")
	u := &charmapi.Universe{
		API: charmapi.API, Unit: "ops-db/0", Service: "ops-db", Charm: "sha256:c", Life: "alive", Leader: true,
		Machine: "m1", Address: "10.0.0.9",
		Config: map[string]any{"port": 5432.0}, LeaderData: map[string]string{}, State: map[string]string{},
		Relations: []charmapi.Relation{
			{Ident: "cluster:1", ID: 1, Name: "cluster", Interface: "opsdb-cluster", Role: "peer", RemoteService: "ops-db",
				Local: map[string]string{}, App: map[string]string{}, RemoteApp: map[string]string{}, Units: map[string]map[string]string{}},
			{Ident: "db:2", ID: 2, Name: "db", Interface: "opsdb", Role: "provides", RemoteService: "web",
				Local: map[string]string{}, App: map[string]string{}, RemoteApp: map[string]string{},
				Units: map[string]map[string]string{"web/0": {}}},
		},
		Events: []charmapi.Event{
			ev("install", "", "", "", ""),
			ev("cluster-relation-created", "cluster:1", "", "ops-db", ""),
			ev("db-relation-created", "db:2", "", "web", ""),
			ev("leader-elected", "", "", "", ""),
			ev("config-changed", "", "", "", ""),
			ev("start", "", "", "", ""),
			ev("db-relation-joined", "db:2", "web/0", "web", ""),
			ev("db-relation-changed", "db:2", "web/0", "web", ""),
		},
	}
	res, stats, unitDir, err := runHooks(t, charm, u)
	if err != nil {
		t.Fatal(err)
	}
	if stats.HooksRun != 8 {
		t.Errorf("stats = %+v; want dispatch run for all 8 events", stats)
	}
	log, err := os.ReadFile(filepath.Join(unitDir, "charm", "events.log"))
	if err != nil {
		t.Fatal(err)
	}
	want := "install\ncluster-relation-created cluster:1\ndb-relation-created db:2\nleader-elected\nconfig-changed\nstart\ndb-relation-joined db:2 web/0\ndb-relation-changed db:2 web/0\n"
	if string(log) != want {
		t.Errorf("events.log:\n%s\nwant:\n%s", log, want)
	}
	password := res.Relations["cluster:1"].App["password"]
	if len(password) != 16 {
		t.Fatalf("the leader kept no password in the peer app data: %+v", res.Relations)
	}
	db := res.Relations["db:2"]
	if db.App["password"] != password || db.App["port"] != "5432" || db.Local["host"] != "10.0.0.9" {
		t.Errorf("db:2 result = %+v; want password %s, port 5432 and host 10.0.0.9 from network-get", db, password)
	}
	if res.Status == nil || *res.Status != (charmapi.Status{State: "active", Message: "serving 1 clients"}) {
		t.Errorf("status = %+v", res.Status)
	}
	if strings.Join(res.Ports, ",") != "5432/tcp" {
		t.Errorf("ports = %v", res.Ports)
	}
	if res.State[model.StateAppVersion] != "1.0" || !strings.Contains(res.State[model.StateAppStatus], "db ready") {
		t.Errorf("state = %v; want the application version and status", res.State)
	}
	if _, err := os.Stat(filepath.Join(unitDir, "charm", ".unit-state.db")); err != nil {
		t.Errorf("ops kept no StoredState in the unit's charm dir: %v", err)
	}
}

// TestOpsSeesJujusMembershipAndStatus runs an ops charm that never sets a
// status through a first call: ops's relation.units (relation-list) holds
// no source unit before its -relation-joined, and the unit's status (from
// status-get) is Juju's "maintenance" while installing and "unknown" once
// started.
func TestOpsSeesJujusMembershipAndStatus(t *testing.T) {
	charm := opsCharm(t, "ops-peek")
	u := &charmapi.Universe{
		API: charmapi.API, Unit: "ops-peek/0", Service: "ops-peek", Charm: "sha256:c", Life: "alive", Leader: true,
		Machine: "m1", Address: "10.0.0.9", Config: map[string]any{}, LeaderData: map[string]string{}, State: map[string]string{},
		Relations: []charmapi.Relation{
			{Ident: "source:0", ID: 0, Name: "source", Interface: "dummy-token", Role: "requires", RemoteService: "dummy-source",
				Local: map[string]string{}, App: map[string]string{}, RemoteApp: map[string]string{"token": "abc"},
				Units: map[string]map[string]string{"dummy-source/0": {}}},
		},
		Events: []charmapi.Event{
			ev("install", "", "", "", ""),
			ev("source-relation-created", "source:0", "", "dummy-source", ""),
			ev("leader-elected", "", "", "", ""),
			ev("config-changed", "", "", "", ""),
			ev("start", "", "", "", ""),
			ev("source-relation-changed", "source:0", "", "dummy-source", ""),
			ev("source-relation-joined", "source:0", "dummy-source/0", "dummy-source", ""),
			ev("source-relation-changed", "source:0", "dummy-source/0", "dummy-source", ""),
		},
	}
	res, _, unitDir, err := runHooks(t, charm, u)
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(filepath.Join(unitDir, "charm", "peek.log"))
	if err != nil {
		t.Fatal(err)
	}
	equalLines(t, "what ops saw", strings.Split(strings.TrimRight(string(log), "\n"), "\n"), []string{
		"install - units= status=maintenance:installing charm software",
		"source-relation-created - units= status=maintenance:installing charm software",
		"leader-elected - units= status=maintenance:installing charm software",
		"config-changed - units= status=maintenance:installing charm software",
		"start - units= status=maintenance:installing charm software",
		"source-relation-changed - units= status=unknown:",
		"source-relation-joined dummy-source/0 units=dummy-source/0 status=unknown:",
		"source-relation-changed dummy-source/0 units=dummy-source/0 status=unknown:",
	})
	if res.Status == nil || *res.Status != (charmapi.Status{State: "unknown"}) {
		t.Errorf("status = %+v; want unknown", res.Status)
	}
}
