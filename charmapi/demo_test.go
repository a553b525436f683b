package charmapi_test

// These tests build the demo and test charms under testdata/charms and run
// their hooks as real processes on hand-written universes, the way an agent
// does: universe JSON on stdin (or in $FIXPOINT_UNIVERSE), the unit's own
// directory as working directory, result JSON on stdout.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
)

// moduleRoot finds the directory holding go.mod above the working directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's working directory")
		}
		dir = parent
	}
}

type built struct {
	once sync.Once
	path string
	err  error
}

var (
	buildDir  string
	buildsMu  sync.Mutex
	buildsFor = map[string]*built{}
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fixpoint-charm-hooks-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// hook builds testdata/charms/<charm>/src once per test binary, as fixpoint
// does when it packs a charm, and returns the executable.
func hook(t *testing.T, charm string) string {
	t.Helper()
	buildsMu.Lock()
	b := buildsFor[charm]
	if b == nil {
		b = &built{}
		buildsFor[charm] = b
	}
	buildsMu.Unlock()
	root := moduleRoot(t)
	b.once.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			b.err = fmt.Errorf("go tool not found: %w", err)
			return
		}
		b.path = filepath.Join(buildDir, charm)
		cmd := exec.Command(goTool, "build", "-o", b.path, "./testdata/charms/"+charm+"/src")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build %s: %v\n%s", charm, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// shHook returns the sh reconcile hook of a test charm.
func shHook(t *testing.T, charm string) string {
	t.Helper()
	path := filepath.Join(moduleRoot(t), "testdata", "charms", charm, "hooks", "reconcile")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&0o111 == 0 {
		t.Fatalf("%s is not executable (mode %v)", path, fi.Mode())
	}
	return path
}

type run struct {
	stdout, stderr []byte
	exit           int
}

// runHook runs a hook in dir with u as JSON on stdin.
func runHook(t *testing.T, bin, dir string, u *charmapi.Universe) run {
	t.Helper()
	in, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	return runRaw(t, bin, dir, in, nil)
}

func runRaw(t *testing.T, bin, dir string, stdin []byte, env []string) run {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(t.Context(), bin)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout = &out
	cmd.Stderr = &errb
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FIXPOINT_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	err := cmd.Run()
	r := run{stdout: out.Bytes(), stderr: errb.Bytes()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.exit = ee.ExitCode()
	default:
		t.Fatalf("run %s: %v", bin, err)
	}
	return r
}

// ok asserts the run succeeded and decodes its result strictly.
func (r run) ok(t *testing.T) *charmapi.Result {
	t.Helper()
	if r.exit != 0 {
		t.Fatalf("hook exited %d; stderr:\n%s", r.exit, r.stderr)
	}
	res, err := decodeResult(r.stdout)
	if err != nil {
		t.Fatalf("hook output: %v\n%s", err, r.stdout)
	}
	return res
}

func decodeResult(b []byte) (*charmapi.Result, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var res charmapi.Result
	if err := dec.Decode(&res); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the result")
	}
	return &res, nil
}

func newUniverse(unit string, leader bool, address string, config map[string]any, rels ...charmapi.Relation) *charmapi.Universe {
	svc, _, _ := strings.Cut(unit, "/")
	if config == nil {
		config = map[string]any{}
	}
	for i := range rels {
		r := &rels[i]
		if r.Ident == "" {
			r.Ident = r.Name + ":" + strconv.Itoa(r.ID)
		}
		if r.Scope == "" {
			r.Scope = "global"
		}
		if r.Role == "peer" && r.RemoteService == "" {
			r.RemoteService = svc
		}
		for _, m := range []*map[string]string{&r.Local, &r.App, &r.RemoteApp} {
			if *m == nil {
				*m = map[string]string{}
			}
		}
		if r.Units == nil {
			r.Units = map[string]map[string]string{}
		}
	}
	return &charmapi.Universe{
		API:        charmapi.API,
		Unit:       unit,
		Service:    svc,
		Charm:      "sha256:test",
		Life:       "alive",
		Leader:     leader,
		Machine:    "local",
		Address:    address,
		Config:     config,
		LeaderData: map[string]string{},
		State:      map[string]string{},
		Relations:  rels,
		Events:     []charmapi.Event{},
		Attempt:    1,
	}
}

func wantPassword(secret, service string) string {
	sum := sha256.Sum256([]byte(secret + "/" + service))
	return hex.EncodeToString(sum[:])[:16]
}

func assertMap(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got  %v\n want %v", what, got, want)
	}
}

func assertStatus(t *testing.T, res *charmapi.Result, state, msg string) {
	t.Helper()
	if res.Status == nil {
		t.Fatalf("no status; want %s %q", state, msg)
	}
	if res.Status.State != state || res.Status.Message != msg {
		t.Errorf("status = %s %q; want %s %q", res.Status.State, res.Status.Message, state, msg)
	}
}

func dbConfig(secret string) map[string]any {
	return map[string]any{"port": 6379, "secret": secret, "max_connections": 200}
}

func TestDBGrantsOnlyUnitsThatAsked(t *testing.T) {
	bin := hook(t, "db")
	u := newUniverse("db/0", true, "10.0.0.1", dbConfig("s3cret"),
		charmapi.Relation{ID: 1, Name: "db", Interface: "kv", Role: "provides", RemoteService: "web",
			Units: map[string]map[string]string{
				"web/0":  {"database": "shop"},
				"web/1":  {"private-address": "10.0.1.2"}, // has not asked
				"web/10": {"database": "shop"},
				"web/2":  {"database": "orders"},
			}},
		charmapi.Relation{ID: 4, Name: "db", Interface: "kv", Role: "provides", RemoteService: "admin",
			Units: map[string]map[string]string{"admin/0": {}}},
		charmapi.Relation{ID: 2, Name: "cluster", Interface: "db-cluster", Role: "peer",
			Units: map[string]map[string]string{"db/1": {"address": "10.0.0.2"}}},
	)
	res := runHook(t, bin, t.TempDir(), u).ok(t)

	assertMap(t, "db:1 local", res.Relations["db:1"].Local, map[string]string{
		"host":          "10.0.0.1",
		"port":          "6379",
		"user":          "web",
		"password":      wantPassword("s3cret", "web"),
		"database":      "orders", // lexically smallest of those asked
		"allowed-units": "web/0 web/2 web/10",
	})
	if res.Relations["db:1"].App != nil {
		t.Errorf("db:1 app written: %v", res.Relations["db:1"].App)
	}
	// Nobody asked over db:4: no credentials, nobody allowed.
	assertMap(t, "db:4 local", res.Relations["db:4"].Local, map[string]string{"host": "10.0.0.1", "port": "6379"})
	assertMap(t, "cluster:2 local", res.Relations["cluster:2"].Local, map[string]string{"address": "10.0.0.1"})
	assertMap(t, "cluster:2 app", res.Relations["cluster:2"].App, map[string]string{"primary": "db/0"})
	assertStatus(t, res, "active", "primary, 3 clients")
	if len(res.Relations) != 3 {
		t.Errorf("wrote %d relations; want 3: %v", len(res.Relations), res.Relations)
	}
}

func TestDBPasswordIsDeterministic(t *testing.T) {
	bin := hook(t, "db")
	mk := func(secret string) *charmapi.Universe {
		return newUniverse("db/0", true, "10.0.0.1", dbConfig(secret),
			charmapi.Relation{ID: 1, Name: "db", Interface: "kv", Role: "provides", RemoteService: "web",
				Units: map[string]map[string]string{"web/0": {"database": "shop"}}})
	}
	dir := t.TempDir()
	first := runHook(t, bin, dir, mk("fixpoint-demo"))
	res := first.ok(t)
	pw := res.Relations["db:1"].Local["password"]
	if pw != wantPassword("fixpoint-demo", "web") || len(pw) != 16 {
		t.Errorf("password = %q; want %q", pw, wantPassword("fixpoint-demo", "web"))
	}
	for i := range 3 {
		again := runHook(t, bin, dir, mk("fixpoint-demo"))
		if !bytes.Equal(again.stdout, first.stdout) {
			t.Fatalf("run %d differs:\n%s\nvs\n%s", i+2, again.stdout, first.stdout)
		}
	}
	other := runHook(t, bin, dir, mk("another")).ok(t)
	if got := other.Relations["db:1"].Local["password"]; got == pw || got != wantPassword("another", "web") {
		t.Errorf("password with another secret = %q; want %q", got, wantPassword("another", "web"))
	}
}

func TestDBNonLeader(t *testing.T) {
	bin := hook(t, "db")
	peer := func(app map[string]string) charmapi.Relation {
		return charmapi.Relation{ID: 2, Name: "cluster", Interface: "db-cluster", Role: "peer", App: app,
			Units: map[string]map[string]string{"db/0": {"address": "10.0.0.1"}}}
	}
	clients := charmapi.Relation{ID: 1, Name: "db", Interface: "kv", Role: "provides", RemoteService: "web",
		Units: map[string]map[string]string{"web/0": {"database": "shop"}}}

	res := runHook(t, bin, t.TempDir(), newUniverse("db/1", false, "10.0.0.2", nil, clients, peer(map[string]string{"primary": "db/0"}))).ok(t)
	if app := res.Relations["cluster:2"].App; app != nil {
		t.Errorf("non-leader wrote the peer app bag: %v", app)
	}
	assertMap(t, "cluster:2 local", res.Relations["cluster:2"].Local, map[string]string{"address": "10.0.0.2"})
	// Every db unit grants, with its own address and the default port.
	local := res.Relations["db:1"].Local
	if local["host"] != "10.0.0.2" || local["port"] != "6379" || local["allowed-units"] != "web/0" ||
		local["password"] != wantPassword("fixpoint-demo", "web") {
		t.Errorf("db:1 local = %v", local)
	}
	assertStatus(t, res, "active", "replica of db/0, 1 client")

	res = runHook(t, bin, t.TempDir(), newUniverse("db/1", false, "10.0.0.2", nil, peer(nil))).ok(t)
	if app := res.Relations["cluster:2"].App; app != nil {
		t.Errorf("non-leader wrote the peer app bag: %v", app)
	}
	assertStatus(t, res, "waiting", "waiting for a primary, 0 clients")
}

func TestDBReadsUniverseFile(t *testing.T) {
	bin := hook(t, "db")
	u := newUniverse("db/0", true, "10.0.0.1", nil,
		charmapi.Relation{ID: 1, Name: "db", Interface: "kv", Role: "provides", RemoteService: "web",
			Units: map[string]map[string]string{"web/0": {"database": "shop"}}})
	in, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "universe.json")
	if err := os.WriteFile(file, in, 0o600); err != nil {
		t.Fatal(err)
	}
	viaStdin := runRaw(t, bin, dir, in, nil)
	viaFile := runRaw(t, bin, dir, nil, []string{"FIXPOINT_UNIVERSE=" + file})
	viaFile.ok(t)
	if !bytes.Equal(viaStdin.stdout, viaFile.stdout) {
		t.Errorf("stdin and $FIXPOINT_UNIVERSE give different results:\n%s\n%s", viaStdin.stdout, viaFile.stdout)
	}
}

func webUniverse(unit string, dbUnits map[string]map[string]string) *charmapi.Universe {
	rels := []charmapi.Relation{
		{ID: 3, Name: "cluster", Interface: "web-cluster", Role: "peer",
			Units: map[string]map[string]string{"web/1": {"address": "10.0.1.2", "port": "8080"}}},
	}
	if dbUnits != nil {
		rels = append(rels, charmapi.Relation{ID: 1, Name: "db", Interface: "kv", Role: "requires",
			RemoteService: "db", Local: map[string]string{"database": "shop"}, Units: dbUnits})
	}
	return newUniverse(unit, true, "10.0.1.1", map[string]any{"database": "shop", "port": 8080}, rels...)
}

func grantFor(host string, allowed ...string) map[string]string {
	return map[string]string{
		"host": host, "port": "6379", "user": "web", "password": wantPassword("fixpoint-demo", "web"),
		"database": "shop", "allowed-units": strings.Join(allowed, " "),
	}
}

func TestWebWaitsUntilAllowed(t *testing.T) {
	bin := hook(t, "web")
	dir := t.TempDir()
	conf := filepath.Join(dir, "web.conf")

	// No db relation at all.
	res := runHook(t, bin, dir, webUniverse("web/0", nil)).ok(t)
	assertStatus(t, res, "blocked", "needs a db relation")
	assertMap(t, "cluster:3 local", res.Relations["cluster:3"].Local, map[string]string{"address": "10.0.1.1", "port": "8080"})

	// Related, but no db unit lists web/0 yet (db/0 granted only web/1,
	// db/1 has not answered): ask, and wait.
	res = runHook(t, bin, dir, webUniverse("web/0", map[string]map[string]string{
		"db/0": grantFor("10.0.0.1", "web/1"),
		"db/1": {"host": "10.0.0.2", "port": "6379"},
	})).ok(t)
	assertMap(t, "db:1 local", res.Relations["db:1"].Local, map[string]string{"database": "shop"})
	assertStatus(t, res, "waiting", "waiting for db access")
	if _, err := os.Stat(conf); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("web.conf exists before access was granted (err %v)", err)
	}

	// db/10 and db/2 list web/0: the lowest unit number wins.
	granted := webUniverse("web/0", map[string]map[string]string{
		"db/0":  grantFor("10.0.0.1", "web/1"),
		"db/10": grantFor("10.0.0.10", "web/0", "web/1"),
		"db/2":  grantFor("10.0.0.2", "web/0", "web/1"),
	})
	first := runHook(t, bin, dir, granted)
	res = first.ok(t)
	assertStatus(t, res, "active", "connected to 10.0.0.2:6379 db shop as web")
	assertMap(t, "db:1 local", res.Relations["db:1"].Local, map[string]string{"database": "shop"})
	data, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"host=10.0.0.2", "port=6379", "database=shop", "user=web",
		"password=" + wantPassword("fixpoint-demo", "web")} {
		if !strings.Contains(string(data), line+"\n") {
			t.Errorf("web.conf lacks %q:\n%s", line, data)
		}
	}

	// Idempotent: the same universe gives the same output and web.conf.
	again := runHook(t, bin, dir, granted)
	if !bytes.Equal(again.stdout, first.stdout) {
		t.Errorf("second run differs:\n%s\nvs\n%s", again.stdout, first.stdout)
	}
	if data2, _ := os.ReadFile(conf); !bytes.Equal(data2, data) {
		t.Errorf("web.conf changed on a rerun:\n%s\nvs\n%s", data2, data)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("unit dir holds %d entries; want only web.conf", len(entries))
	}

	// Access withdrawn: back to waiting, web.conf gone.
	res = runHook(t, bin, dir, webUniverse("web/0", map[string]map[string]string{"db/0": grantFor("10.0.0.1", "web/1")})).ok(t)
	assertStatus(t, res, "waiting", "waiting for db access")
	if _, err := os.Stat(conf); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("web.conf still there after access was withdrawn (err %v)", err)
	}
}

// The demo environment's fixed point, and the oscillate pair's and the
// clock's lack of one, are checked under many schedules by the simulator,
// with the engine's own rules: see charmtest/demo_test.go.

func TestClockPublishesTime(t *testing.T) {
	bin := hook(t, "clock")
	u := newUniverse("clock/0", true, "10.0.2.1", nil,
		charmapi.Relation{ID: 1, Name: "ring", Interface: "clock", Role: "peer",
			Units: map[string]map[string]string{"clock/1": {"now": "1"}}})
	res := runHook(t, bin, t.TempDir(), u).ok(t)
	now, err := strconv.ParseInt(res.Relations["ring:1"].Local["now"], 10, 64)
	if err != nil || now <= 0 {
		t.Errorf("ring:1 now = %q (%v)", res.Relations["ring:1"].Local["now"], err)
	}
	assertStatus(t, res, "active", "ticking with 1 peer")
}

// failUniverse is a fail-* unit related to one db unit.
func failUniverse(svc string) *charmapi.Universe {
	return newUniverse(svc+"/0", true, "10.0.3.1", nil,
		charmapi.Relation{ID: 1, Name: "db", Interface: "kv", Role: "requires", RemoteService: "db",
			Units: map[string]map[string]string{"db/0": {"host": "10.0.0.1", "port": "6379"}}})
}

// TestFailCharms checks that the fault charms misbehave exactly as the
// engine's failure tests expect.
func TestFailCharms(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	validStates := map[string]bool{"active": true, "blocked": true, "waiting": true, "maintenance": true}

	t.Run("fail-exit", func(t *testing.T) {
		r := runHook(t, shHook(t, "fail-exit"), t.TempDir(), failUniverse("fail-exit"))
		if r.exit != 3 {
			t.Errorf("exit = %d; want 3", r.exit)
		}
		if !strings.Contains(string(r.stderr), "boom: cannot reach backend") {
			t.Errorf("stderr = %q", r.stderr)
		}
	})
	t.Run("fail-json", func(t *testing.T) {
		r := runHook(t, shHook(t, "fail-json"), t.TempDir(), failUniverse("fail-json"))
		if r.exit != 0 {
			t.Errorf("exit = %d; want 0 (the failure is the output)", r.exit)
		}
		var v any
		if err := json.Unmarshal(r.stdout, &v); err == nil {
			t.Errorf("output is valid JSON: %s", r.stdout)
		}
	})
	t.Run("fail-relation", func(t *testing.T) {
		u := failUniverse("fail-relation")
		res := runHook(t, shHook(t, "fail-relation"), t.TempDir(), u).ok(t)
		if _, ok := res.Relations["nosuch:99"]; !ok {
			t.Fatalf("result does not write nosuch:99: %+v", res.Relations)
		}
		for _, r := range u.Relations {
			if r.Ident == "nosuch:99" {
				t.Fatal("nosuch:99 is in the universe")
			}
		}
		if res.Status == nil || !validStates[res.Status.State] {
			t.Errorf("status %+v: the relation should be the only fault", res.Status)
		}
	})
	t.Run("fail-schema", func(t *testing.T) {
		res := runHook(t, shHook(t, "fail-schema"), t.TempDir(), failUniverse("fail-schema")).ok(t)
		if res.Status == nil || res.Status.State != "happy" || validStates[res.Status.State] {
			t.Errorf("status = %+v; want the invalid state happy", res.Status)
		}
		if len(res.Relations) != 0 {
			t.Errorf("relations written: %v; the status should be the only fault", res.Relations)
		}
	})
	t.Run("fail-timeout", func(t *testing.T) {
		path := shHook(t, "fail-timeout")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "\nexec sleep 3600\n") {
			t.Errorf("%s does not exec sleep", path)
		}
		t.Skip("not run: it sleeps for an hour")
	})
}

// TestTestdataCharms checks every charm here has metadata and a hook.
func TestTestdataCharms(t *testing.T) {
	root := filepath.Join(moduleRoot(t), "testdata", "charms")
	for _, c := range []string{"db", "web", "oscillate-a", "oscillate-b", "clock",
		"fail-exit", "fail-timeout", "fail-json", "fail-relation", "fail-schema"} {
		data, err := os.ReadFile(filepath.Join(root, c, "charm.cue"))
		if err != nil {
			t.Error(err)
			continue
		}
		if !strings.Contains(string(data), `name:    "`+c+`"`) {
			t.Errorf("%s/charm.cue does not name %s", c, c)
		}
		_, srcErr := os.Stat(filepath.Join(root, c, "src", "main.go"))
		_, hookErr := os.Stat(filepath.Join(root, c, "hooks", "reconcile"))
		if (srcErr == nil) == (hookErr == nil) {
			t.Errorf("%s: want exactly one of src/main.go and hooks/reconcile", c)
		}
	}
}
