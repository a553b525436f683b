package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/model"
)

// The old-hook charms testdata/charms/classic-db and classic-web run
// through the real binary side by side with their reconcile-hook twins
// testdata/charms/db and web: two `up`s, the same environment changes
// applied to both, and after each change every unit's relation settings,
// workload status and web.conf must be the same. The classic charms log
// every hook they run to hooks.log in their unit directory; from it the
// test checks that each change ran the hooks a Juju user expects.

// envShape is one version of the shop environment.
type envShape struct {
	db, web   int
	related   bool
	dbConfig  string // CUE fields, e.g. `port: 7000`
	webConfig string
	// classicWeb, when set, is the classic-web charm directory to use.
	classicWeb string
}

// classicBase is the shape of testdata/classic/env.cue and the demo.
var classicBase = envShape{db: 2, web: 2, related: true, dbConfig: "max_connections: 200"}

// writeEnv writes s with the charms of flavour ("classic-" or "") to
// dir/name.cue and returns its path.
func (s envShape) writeEnv(t *testing.T, dir, name, flavour string) string {
	t.Helper()
	charms, err := filepath.Abs(repo("testdata", "charms"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: \"fixpoint/v1\"\nname: \"shop\"\nservices: {\n")
	fmt.Fprintf(&b, "\tdb: {charm: %q, units: %d, config: {%s}}\n", filepath.Join(charms, flavour+"db"), s.db, s.dbConfig)
	web := filepath.Join(charms, flavour+"web")
	if flavour == "classic-" && s.classicWeb != "" {
		web = s.classicWeb
	}
	fmt.Fprintf(&b, "\tweb: {charm: %q, units: %d, config: {%s}}\n", web, s.web, s.webConfig)
	b.WriteString("}\n")
	if s.related {
		b.WriteString("relations: \"web-db\": [\"web:db\", \"db:db\"]\n")
	}
	path := filepath.Join(dir, name+".cue")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runFlavour is one of the two side-by-side runs.
type runFlavour struct {
	name   string // "classic-" or ""
	data   string
	up     *upProc
	status *engine.Status
	logs   map[string]int // unit → hooks.log lines already looked at
}

func (f *runFlavour) apply(t *testing.T, env string) {
	t.Helper()
	r := fixpoint(t, 4*time.Minute, "apply", "-f", env, "--yes", "--wait", "--timeout", "3m", "--data-dir", f.data)
	if r.code != 0 {
		t.Fatalf("%sdb/web: apply %s exited %d\nstdout:\n%s\nstderr:\n%s\nup:\n%s", f.name, filepath.Base(env), r.code, r.stdout, r.stderr, f.up.out)
	}
	f.status = statusJSON(t, f.data)
	if !f.status.Converged {
		t.Fatalf("%sdb/web: apply --wait returned before the fixed point: %s", f.name, f.status.Summary)
	}
}

// unitDir is where the agent keeps unit's files.
func (f *runFlavour) unitDir(unit string) string {
	return filepath.Join(f.data, "agent", "units", strings.ReplaceAll(unit, "/", "-"))
}

// hooks returns the hooks unit ran since the last call, one
// "hook [relation [remote unit]]" per line.
func (f *runFlavour) hooks(t *testing.T, unit string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(f.unitDir(unit), "hooks.log"))
	if err != nil {
		t.Fatalf("%s: %v", unit, err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if f.logs == nil {
		f.logs = map[string]int{}
	}
	from := f.logs[unit]
	f.logs[unit] = len(lines)
	return lines[from:]
}

// units are the units in the last status, sorted.
func (f *runFlavour) units() []string {
	var out []string
	for name := range f.status.Units {
		out = append(out, name)
	}
	sort.Slice(out, func(i, j int) bool { return model.UnitLess(out[i], out[j]) })
	return out
}

// settledView is what a unit has settled on, compared between flavours.
type settledView struct {
	Leader    bool
	Phase     string
	Status    model.Status
	Relations []charmapi.Relation
	// Conf is web.conf without its first line (which names the charm),
	// "absent" when there is none.
	Conf string
}

func (f *runFlavour) view(t *testing.T, unit string) settledView {
	t.Helper()
	r := fixpoint(t, time.Minute, "debug", "universe", unit, "--data-dir", f.data)
	if r.code != 0 {
		t.Fatalf("%s: debug universe %s exited %d: %s", f.name, unit, r.code, r.stderr)
	}
	var u charmapi.Universe
	if err := json.Unmarshal([]byte(r.stdout), &u); err != nil {
		t.Fatalf("debug universe %s: %v\n%s", unit, err, r.stdout)
	}
	us := f.status.Units[unit]
	v := settledView{Leader: us.Leader, Phase: us.Phase, Status: us.Status, Relations: u.Relations, Conf: "absent"}
	sort.Slice(v.Relations, func(i, j int) bool { return v.Relations[i].ID < v.Relations[j].ID })
	if conf, err := os.ReadFile(filepath.Join(f.unitDir(unit), "web.conf")); err == nil {
		_, v.Conf, _ = strings.Cut(string(conf), "\n")
	}
	return v
}

// sameSettled checks that the classic run settled where the reconcile run did,
// and returns the classic units' views.
func sameSettled(t *testing.T, step string, classic, recon *runFlavour) map[string]settledView {
	t.Helper()
	cu, ru := classic.units(), recon.units()
	if !reflect.DeepEqual(cu, ru) {
		t.Fatalf("%s: classic units %v, reconcile units %v", step, cu, ru)
	}
	views := map[string]settledView{}
	for _, unit := range cu {
		c, r := classic.view(t, unit), recon.view(t, unit)
		if !reflect.DeepEqual(c, r) {
			cj, _ := json.MarshalIndent(c, "", "  ")
			rj, _ := json.MarshalIndent(r, "", "  ")
			t.Errorf("%s: %s differs\nclassic:\n%s\nreconcile:\n%s", step, unit, cj, rj)
		}
		views[unit] = c
	}
	t.Logf("%s: same settings, statuses and web.conf on %d units; reconciles: classic %d, reconcile %d",
		step, len(cu), totalReconciles(classic.status), totalReconciles(recon.status))
	return views
}

func totalReconciles(st *engine.Status) int {
	n := 0
	for _, u := range st.Units {
		n += u.Reconciles
	}
	return n
}

// countLine is how many of lines are want.
func countLine(lines []string, want string) int {
	n := 0
	for _, l := range lines {
		if l == want {
			n++
		}
	}
	return n
}

// checkJoinedThenChanged checks that every joined is directly followed by
// changed for the same unit, as Juju runs them, when the unit's charm has
// that changed hook (a missing hook is skipped).
func checkJoinedThenChanged(t *testing.T, step, unit string, lines []string) {
	t.Helper()
	svc, _, _ := strings.Cut(unit, "/")
	for i, l := range lines {
		hook, rest, _ := strings.Cut(l, " ")
		if !strings.HasSuffix(hook, "-relation-joined") {
			continue
		}
		changed := strings.TrimSuffix(hook, "joined") + "changed"
		if _, err := os.Stat(repo("testdata", "charms", "classic-"+svc, "hooks", changed)); err != nil {
			continue
		}
		if want := changed + " " + rest; i+1 >= len(lines) || lines[i+1] != want {
			t.Errorf("%s: %s ran %q not directly followed by %q:\n%s", step, unit, l, want, strings.Join(lines, "\n"))
		}
	}
}

// identOf is the ident of unit's relation over endpoint.
func identOf(t *testing.T, unit string, v settledView, endpoint string) string {
	t.Helper()
	for _, r := range v.Relations {
		if r.Name == endpoint {
			return r.Ident
		}
	}
	t.Fatalf("%s has no %s relation: %+v", unit, endpoint, v.Relations)
	return ""
}

// copyDir copies the tree at src to dst, modes included.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(target, info.Mode().Perm())
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// derivedPassword is the password the db charms derive for service.
func derivedPassword(secret, service string) string {
	sum := sha256.Sum256([]byte(secret + "/" + service))
	return hex.EncodeToString(sum[:])[:16]
}

func TestClassicCharmsBehaveLikeTheReconcileCharms(t *testing.T) {
	t.Parallel()
	envs := t.TempDir()
	classic := &runFlavour{name: "classic-", data: t.TempDir()}
	recon := &runFlavour{name: "", data: t.TempDir()}
	classic.up = startUp(t, classic.data, repo("testdata", "classic", "env.cue"))
	recon.up = startUp(t, recon.data, classicBase.writeEnv(t, envs, "recon-classicBase", ""))
	classic.status = classic.up.waitConverged(t, converges)
	recon.status = recon.up.waitConverged(t, converges)
	// step applies s to both runs and compares where they settle.
	step := func(name string, s envShape) map[string]settledView {
		t.Helper()
		classic.apply(t, s.writeEnv(t, envs, "classic-"+name, "classic-"))
		recon.apply(t, s.writeEnv(t, envs, "recon-"+name, ""))
		return sameSettled(t, name, classic, recon)
	}

	// First run: the same settings, and Juju's setup hooks once each.
	views := sameSettled(t, "first run", classic, recon)
	for _, unit := range []string{"web/0", "web/1"} {
		if v := views[unit]; v.Status.State != "active" || !strings.Contains(v.Conf, "user=web") {
			t.Errorf("first run: %s is not connected: %+v", unit, v)
		}
	}
	for _, unit := range classic.units() {
		lines := classic.hooks(t, unit)
		if len(lines) < 4 || lines[0] != "install" {
			t.Errorf("first run: %s did not start with install:\n%s", unit, strings.Join(lines, "\n"))
		}
		for _, h := range []string{"install", "config-changed", "start"} {
			if n := countLine(lines, h); n != 1 {
				t.Errorf("first run: %s ran %s %d times, want once", unit, h, n)
			}
		}
		leaderHook := "leader-settings-changed"
		if views[unit].Leader {
			leaderHook = "leader-elected"
		}
		if n := countLine(lines, leaderHook); n != 1 {
			t.Errorf("first run: %s ran %s %d times, want once", unit, leaderHook, n)
		}
		checkJoinedThenChanged(t, "first run", unit, lines)
	}
	rel := identOf(t, "web/0", views["web/0"], "db")
	dbPeers, webPeers := identOf(t, "db/0", views["db/0"], "cluster"), identOf(t, "web/0", views["web/0"], "cluster")

	// Removing the relation: every unit departs each remote unit, then
	// the relation is broken; web forgets its credentials and blocks.
	noRel := classicBase
	noRel.related = false
	views = step("relation removed", noRel)
	for _, unit := range classic.units() {
		remotes := []string{"web/0", "web/1"}
		if strings.HasPrefix(unit, "web/") {
			remotes = []string{"db/0", "db/1"}
		}
		want := []string{"db-relation-departed " + rel + " " + remotes[0], "db-relation-departed " + rel + " " + remotes[1], "db-relation-broken " + rel}
		if got := classic.hooks(t, unit); !reflect.DeepEqual(got, want) {
			t.Errorf("relation removed: %s ran\n%s\nwant\n%s", unit, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	for _, unit := range []string{"web/0", "web/1"} {
		v := views[unit]
		if v.Status != (model.Status{State: "blocked", Message: "needs a db relation"}) || v.Conf != "absent" {
			t.Errorf("relation removed: %s status %+v, web.conf %q", unit, v.Status, v.Conf)
		}
	}
	if v := views["db/0"]; v.Status.Message != "primary, 0 clients" {
		t.Errorf("relation removed: db/0 status %+v", v.Status)
	}

	// Re-adding it: a new relation, created, then joined+changed per
	// remote unit; web reconnects. Nothing else runs.
	views = step("relation re-added", classicBase)
	newRel := identOf(t, "web/0", views["web/0"], "db")
	if newRel == rel {
		t.Errorf("relation re-added: the new relation has the old id %s", rel)
	}
	for _, unit := range classic.units() {
		lines := classic.hooks(t, unit)
		remotes := []string{"web/0", "web/1"}
		if strings.HasPrefix(unit, "web/") {
			remotes = []string{"db/0", "db/1"}
		}
		if len(lines) == 0 || lines[0] != "db-relation-created "+newRel {
			t.Errorf("relation re-added: %s did not start with db-relation-created %s:\n%s", unit, newRel, strings.Join(lines, "\n"))
		}
		for _, r := range remotes {
			if n := countLine(lines, "db-relation-joined "+newRel+" "+r); n != 1 {
				t.Errorf("relation re-added: %s ran joined for %s %d times, want once:\n%s", unit, r, n, strings.Join(lines, "\n"))
			}
		}
		for _, l := range lines {
			if !strings.HasPrefix(l, "db-relation-") || !strings.Contains(l, " "+newRel) || strings.Contains(l, "departed") || strings.Contains(l, "broken") {
				t.Errorf("relation re-added: %s ran %q", unit, l)
			}
		}
		checkJoinedThenChanged(t, "relation re-added", unit, lines)
	}
	for _, unit := range []string{"web/0", "web/1"} {
		if v := views[unit]; v.Status.State != "active" || !strings.Contains(v.Conf, "user=web") {
			t.Errorf("relation re-added: %s did not reconnect: %+v", unit, v)
		}
	}

	// Scaling up: the new units install and join; the others see them
	// join, and the db units grant the new web unit.
	up := classicBase
	up.db, up.web = 3, 3
	views = step("scaled up", up)
	for _, unit := range classic.units() {
		lines := classic.hooks(t, unit)
		checkJoinedThenChanged(t, "scaled up", unit, lines)
		if unit == "db/2" || unit == "web/2" {
			if len(lines) == 0 || lines[0] != "install" || countLine(lines, "start") != 1 {
				t.Errorf("scaled up: new unit %s ran:\n%s", unit, strings.Join(lines, "\n"))
			}
			continue
		}
		var want []string
		if strings.HasPrefix(unit, "web/") {
			want = []string{"db-relation-joined " + newRel + " db/2", "cluster-relation-joined " + webPeers + " web/2"}
		} else {
			want = []string{"db-relation-joined " + newRel + " web/2", "cluster-relation-joined " + dbPeers + " db/2"}
		}
		for _, w := range want {
			if n := countLine(lines, w); n != 1 {
				t.Errorf("scaled up: %s ran %q %d times, want once:\n%s", unit, w, n, strings.Join(lines, "\n"))
			}
		}
		for _, l := range lines {
			if strings.Contains(l, "departed") || strings.Contains(l, "broken") || strings.HasPrefix(l, "install") || strings.HasPrefix(l, "config-changed") {
				t.Errorf("scaled up: %s ran %q", unit, l)
			}
		}
	}
	if got := views["db/0"].Relations; len(got) < 2 || got[1].Local["allowed-units"] != "web/0 web/1 web/2" {
		t.Errorf("scaled up: db/0 relations %+v", got)
	}

	// Scaling down: the remaining units see the removed ones depart,
	// once each; the removed ones break their relations and stop.
	down := classicBase
	down.db, down.web = 1, 2
	views = step("scaled down", down)
	if got := classic.units(); !reflect.DeepEqual(got, []string{"db/0", "web/0", "web/1"}) {
		t.Fatalf("scaled down: units %v", got)
	}
	// The removed units' last hooks are in the logs the agent leaves
	// (unless it cleans removed units' directories up).
	for _, unit := range []string{"db/1", "db/2", "web/2"} {
		if _, err := os.Stat(filepath.Join(classic.unitDir(unit), "hooks.log")); errors.Is(err, fs.ErrNotExist) {
			t.Logf("scaled down: %s's directory is gone; its last hooks cannot be checked", unit)
			continue
		}
		lines := classic.hooks(t, unit)
		if len(lines) == 0 || lines[len(lines)-1] != "stop" || countLine(lines, "db-relation-broken "+newRel) != 1 {
			t.Errorf("scaled down: removed unit %s ran\n%s\nwant db-relation-broken %s once, and stop last", unit, strings.Join(lines, "\n"), newRel)
		}
	}
	for _, unit := range classic.units() {
		lines := classic.hooks(t, unit)
		var want []string
		if unit == "db/0" {
			want = []string{"db-relation-departed " + newRel + " web/2", "cluster-relation-departed " + dbPeers + " db/1", "cluster-relation-departed " + dbPeers + " db/2"}
		} else {
			// classic-web has no cluster-relation-departed hook: web/2
			// leaving its peers runs nothing there, as in Juju.
			want = []string{"db-relation-departed " + newRel + " db/1", "db-relation-departed " + newRel + " db/2"}
		}
		for _, w := range want {
			if n := countLine(lines, w); n != 1 {
				t.Errorf("scaled down: %s ran %q %d times, want once:\n%s", unit, w, n, strings.Join(lines, "\n"))
			}
		}
		for _, l := range lines {
			if strings.Contains(l, "broken") || strings.Contains(l, "joined") || l == "stop" {
				t.Errorf("scaled down: %s ran %q", unit, l)
			}
		}
	}
	for _, unit := range []string{"web/0", "web/1"} {
		if v := views[unit]; v.Status.State != "active" || !strings.Contains(v.Conf, "user=web") {
			t.Errorf("scaled down: %s lost its database: %+v", unit, v)
		}
	}
	if got := views["db/0"].Relations; len(got) < 2 || got[1].Local["allowed-units"] != "web/0 web/1" {
		t.Errorf("scaled down: db/0 relations %+v", got)
	}

	// A config change, two keys at once: config-changed runs once on
	// each db unit; web sees the new grant as db-relation-changed and
	// rewrites web.conf.
	cfg := down
	cfg.dbConfig = `max_connections: 200, port: 7000, secret: "rotated"`
	views = step("config changed", cfg)
	for _, unit := range classic.units() {
		lines := classic.hooks(t, unit)
		if strings.HasPrefix(unit, "db/") {
			if !reflect.DeepEqual(lines, []string{"config-changed"}) {
				t.Errorf("config changed: %s ran\n%s\nwant config-changed once", unit, strings.Join(lines, "\n"))
			}
			continue
		}
		if countLine(lines, "config-changed") != 0 || countLine(lines, "db-relation-changed "+newRel+" db/0") == 0 {
			t.Errorf("config changed: %s ran\n%s\nwant db-relation-changed %s db/0 and no config-changed", unit, strings.Join(lines, "\n"), newRel)
		}
	}
	for _, unit := range []string{"web/0", "web/1"} {
		if v := views[unit]; !strings.Contains(v.Conf, "port=7000\n") || !strings.Contains(v.Conf, "password="+derivedPassword("rotated", "web")+"\n") {
			t.Errorf("config changed: %s web.conf:\n%s", unit, v.Conf)
		}
	}

	// A new revision of classic-web (the same hooks and one more file):
	// each web unit runs upgrade-charm, then config-changed, once each,
	// and settles where it was; the db units run nothing.
	upgraded := filepath.Join(t.TempDir(), "classic-web")
	copyDir(t, repo("testdata", "charms", "classic-web"), upgraded)
	if err := os.WriteFile(filepath.Join(upgraded, "revision"), []byte("2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	upg := cfg
	upg.classicWeb = upgraded
	charm := classic.status.Services["web"].Charm
	classic.apply(t, upg.writeEnv(t, envs, "classic-upgraded", "classic-"))
	if classic.status.Services["web"].Charm == charm {
		t.Fatalf("charm upgraded: web still runs charm %s", charm)
	}
	sameSettled(t, "charm upgraded", classic, recon)
	for _, unit := range classic.units() {
		lines := classic.hooks(t, unit)
		want := []string{"upgrade-charm", "config-changed"}
		if strings.HasPrefix(unit, "db/") {
			want = nil
		}
		if len(lines) != len(want) || (len(want) > 0 && !reflect.DeepEqual(lines, want)) {
			t.Errorf("charm upgraded: %s ran\n%s\nwant\n%s", unit, strings.Join(lines, "\n"), strings.Join(want, "\n"))
		}
	}

	classic.up.stop(t)
	recon.up.stop(t)
}
