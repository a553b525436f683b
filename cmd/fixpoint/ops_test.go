package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
)

// The charms in testdata/ops are written with Canonical's ops framework
// and laid out as charmcraft packs them (dispatch at the root, hooks/
// links to it, src/charm.py); ops itself is copied into their venv/ from
// beside the checkout. They run here through the real binary, as
// classic_test.go runs the classic charms: deploy, config change, scale
// down, upgrade, relation removal.

// opsFrameworkDir finds shared/thirdparty/python-ops beside the checkout
// (or beside a directory above it, for a git worktree); "" if none.
func opsFrameworkDir() string {
	dir, err := filepath.Abs(repo())
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

// packOps copies testdata/ops/<name> to dst with ops in venv/.
func packOps(t *testing.T, fw, name, dst string) string {
	t.Helper()
	for _, cp := range [][2]string{{repo("testdata", "ops", name), dst}, {fw, filepath.Join(dst, "venv")}} {
		if out, err := exec.Command("cp", "-a", cp[0], cp[1]).CombinedOutput(); err != nil {
			t.Fatalf("cp %s: %v\n%s", cp[0], err, out)
		}
	}
	return dst
}

// opsShape is one version of the ops environment.
type opsShape struct {
	db, web int
	port    int
	related bool
	webDir  string
}

func (s opsShape) write(t *testing.T, dir, name, dbDir string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: \"fixpoint/v1\"\nname: \"opsshop\"\nservices: {\n")
	fmt.Fprintf(&b, "\t\"ops-db\": {charm: %q, units: %d, config: {port: %d}}\n", dbDir, s.db, s.port)
	fmt.Fprintf(&b, "\t\"ops-web\": {charm: %q, units: %d}\n}\n", s.webDir, s.web)
	if s.related {
		b.WriteString("relations: \"web-db\": [\"ops-web:db\", \"ops-db:db\"]\n")
	}
	path := filepath.Join(dir, name+".cue")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// opsRun is the running environment and how to look into its units.
type opsRun struct {
	data   string
	up     *upProc
	status *engine.Status
}

// charmFile reads a file the charm wrote in unit's own charm directory.
func (r *opsRun) charmFile(t *testing.T, unit, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.data, "agent", "units", strings.ReplaceAll(unit, "/", "-"), "charm", name))
	if err != nil {
		return ""
	}
	return string(b)
}

func (r *opsRun) apply(t *testing.T, env string) {
	t.Helper()
	res := fixpoint(t, 22*time.Minute, "apply", "-f", env, "--yes", "--wait", "--timeout", "20m", "--data-dir", r.data)
	if res.code != 0 {
		t.Fatalf("apply %s exited %d\nstdout:\n%s\nstderr:\n%s\nup:\n%s", filepath.Base(env), res.code, res.stdout, res.stderr, r.up.out)
	}
	r.status = statusJSON(t, r.data)
	if !r.status.Converged {
		t.Fatalf("apply --wait returned before the fixed point: %s", r.status.Summary)
	}
}

// counts reads the StoredState counters the charm mirrors to stored.json.
func (r *opsRun) counts(t *testing.T, unit string) map[string]int {
	t.Helper()
	out := map[string]int{}
	if err := json.Unmarshal([]byte(r.charmFile(t, unit, "stored.json")), &out); err != nil {
		t.Fatalf("%s: stored.json: %v", unit, err)
	}
	return out
}

var webConf = regexp.MustCompile(`^hello\nhosts=(\S+)\nport=(\d+)\npassword=([0-9a-f]{16})\n$`)

func TestOpsCharmsEndToEnd(t *testing.T) {
	t.Parallel()
	fw := opsFrameworkDir()
	if fw == "" {
		t.Skip("Canonical's ops framework is not beside the checkout (../shared/thirdparty/python-ops): the ops charms cannot run")
	}
	if out, err := exec.Command("/usr/bin/python3", "-c", "import yaml, websocket").CombinedOutput(); err != nil {
		t.Fatalf("/usr/bin/python3 cannot import what ops needs (apt-get install python3-yaml python3-websocket, as .ci/run does): %v\n%s", err, out)
	}
	charms, envs := t.TempDir(), t.TempDir()
	dbDir := packOps(t, fw, "ops-db", filepath.Join(charms, "ops-db"))
	webDir := packOps(t, fw, "ops-web", filepath.Join(charms, "ops-web"))
	r := &opsRun{data: t.TempDir()}
	shape := opsShape{db: 2, web: 1, port: 5432, related: true, webDir: webDir}
	r.up = startUp(t, r.data, shape.write(t, envs, "deploy", dbDir))
	r.status = r.up.waitConverged(t, 25*time.Minute)

	// Deployed: every unit settled; ops ran every event through dispatch;
	// the leader's random password reached the web unit.
	for name, u := range r.status.Units {
		if u.Phase != engine.Settled {
			t.Errorf("deploy: %s is %s: %s", name, u.Phase, u.Error)
		}
	}
	if st := r.status.Units["ops-web/0"].Status; st.State != "active" || st.Message != "connected to 2 db units" {
		t.Errorf("deploy: ops-web/0 status %+v", st)
	}
	m := webConf.FindStringSubmatch(r.charmFile(t, "ops-web/0", "web.conf"))
	if m == nil || m[2] != "5432" {
		t.Fatalf("deploy: ops-web/0 web.conf = %q", r.charmFile(t, "ops-web/0", "web.conf"))
	}
	password := m[3]
	for _, unit := range []string{"ops-db/0", "ops-db/1"} {
		u := r.status.Units[unit]
		if u.Status.Message != "serving 1 clients" || strings.Join(u.Ports, ",") != "5432/tcp" {
			t.Errorf("deploy: %s status %+v ports %v", unit, u.Status, u.Ports)
		}
		log := r.charmFile(t, unit, "events.log")
		if !strings.HasPrefix(log, "install\n") || !strings.Contains(log, "\nstart\n") || !strings.Contains(log, "\nconfig-changed\n") {
			t.Errorf("deploy: %s events:\n%s", unit, log)
		}
		if c := r.counts(t, unit); c["InstallEvent"] != 1 {
			t.Errorf("deploy: %s StoredState counts %v; want one install of its own", unit, c)
		}
	}
	// The leader's app.status and workload version are the service's,
	// as juju status shows them on the application's line.
	if s := r.status.Services["ops-db"]; s.Status == nil || s.Status.State != "active" || s.Status.Message != "db ready" || s.Version != "1.0" {
		t.Errorf("deploy: ops-db's service status %+v, version %q; want active \"db ready\", 1.0", s.Status, s.Version)
	}

	// Config change: the port moves everywhere, the password stays (read
	// back from the peer app data, not made up again).
	shape.port = 6000
	r.apply(t, shape.write(t, envs, "port", dbDir))
	if m := webConf.FindStringSubmatch(r.charmFile(t, "ops-web/0", "web.conf")); m == nil || m[2] != "6000" || m[3] != password {
		t.Errorf("config changed: ops-web/0 web.conf = %q; want port 6000 and password %s", r.charmFile(t, "ops-web/0", "web.conf"), password)
	}
	if p := r.status.Units["ops-db/0"].Ports; strings.Join(p, ",") != "6000/tcp" {
		t.Errorf("config changed: ops-db/0 ports %v", p)
	}

	// Scale down: ops-db/1 goes; the others see it depart, and
	// ops-web/0's departed hook still reads ops-db/1's host.
	shape.db = 1
	r.apply(t, shape.write(t, envs, "down", dbDir))
	if _, ok := r.status.Units["ops-db/1"]; ok {
		t.Errorf("scaled down: ops-db/1 is still there")
	}
	if st := r.status.Units["ops-web/0"].Status; st.Message != "connected to 1 db units" {
		t.Errorf("scaled down: ops-web/0 status %+v", st)
	}
	if log := r.charmFile(t, "ops-db/0", "events.log"); !regexp.MustCompile(`\ncluster-relation-departed cluster:\d+ ops-db/1\n`).MatchString(log) {
		t.Errorf("scaled down: ops-db/0 did not see its peer ops-db/1 depart:\n%s", log)
	}
	if dep := r.charmFile(t, "ops-web/0", "departed.log"); !regexp.MustCompile(`^ops-db/1 host=\S+\n$`).MatchString(dep) {
		t.Errorf("scaled down: ops-web/0's departed hook read %q; want ops-db/1's last host", dep)
	}

	// Upgrade: a new ops-web; upgrade-charm runs, StoredState and the
	// files the charm wrote survive in its charm dir.
	upgraded := packOps(t, fw, "ops-web", filepath.Join(charms, "ops-web-2"))
	if err := os.WriteFile(filepath.Join(upgraded, "VERSION"), []byte("2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	shape.webDir = upgraded
	r.apply(t, shape.write(t, envs, "upgrade", dbDir))
	if log := r.charmFile(t, "ops-web/0", "events.log"); !strings.Contains(log, "\nupgrade-charm\n") {
		t.Errorf("upgraded: ops-web/0 events:\n%s", log)
	}
	if c := r.counts(t, "ops-web/0"); c["InstallEvent"] != 1 || c["UpgradeCharmEvent"] != 1 {
		t.Errorf("upgraded: StoredState counts %v; want the install count kept and one upgrade", c)
	}
	if r.charmFile(t, "ops-web/0", "VERSION") != "2\n" || r.charmFile(t, "ops-web/0", "departed.log") == "" {
		t.Errorf("upgraded: the new charm's file is missing, or the charm's own file was lost")
	}

	// Relation removal: web blocks and forgets its config.
	shape.related = false
	r.apply(t, shape.write(t, envs, "unrelated", dbDir))
	if st := r.status.Units["ops-web/0"].Status; st.State != "blocked" || st.Message != "needs a db relation" {
		t.Errorf("relation removed: ops-web/0 status %+v", st)
	}
	if conf := r.charmFile(t, "ops-web/0", "web.conf"); conf != "" {
		t.Errorf("relation removed: web.conf still there: %q", conf)
	}
	if log := r.charmFile(t, "ops-db/0", "events.log"); !regexp.MustCompile(`\ndb-relation-broken db:\d+\n`).MatchString(log) {
		t.Errorf("relation removed: ops-db/0 events:\n%s", log)
	}
}

// TestCharmTestOpsGeneratedPassword runs charm test on the ops charms:
// ops-db's leader makes its password up at random on its first run and
// reads it back after, which the report names as generated once rather
// than as a hook that is not a function of its universe or as several
// fixed points.
func TestCharmTestOpsGeneratedPassword(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs every ops event through Python: slow")
	}
	fw := opsFrameworkDir()
	if fw == "" {
		t.Skip("Canonical's ops framework is not beside the checkout (../shared/thirdparty/python-ops): the ops charms cannot run")
	}
	charms, envs := t.TempDir(), t.TempDir()
	dbDir := packOps(t, fw, "ops-db", filepath.Join(charms, "ops-db"))
	webDir := packOps(t, fw, "ops-web", filepath.Join(charms, "ops-web"))
	env := opsShape{db: 2, web: 1, port: 5432, related: true, webDir: webDir}.write(t, envs, "env", dbDir)
	// Schedule 0 runs every first universe twice: the two passwords the
	// leader makes up there are what shows they are random.
	r := fixpoint(t, 20*time.Minute, "charm", "test", "-f", env, "--schedules", "2")
	if r.code != 0 {
		t.Fatalf("charm test exited %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"all to the same fixed point", "generated once and read back after", "ops-db/0 relations.cluster:0.app.password"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, r.stdout)
		}
	}
}
