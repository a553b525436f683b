package charmtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine"
)

func TestUniverseBuilder(t *testing.T) {
	b := NewUniverse("db/0").Leader().Config("port", 6379).LeaderData("seed", "x")
	b.Provides("db", "web").Interface("kv").Unit("web/0", "database", "shop").Units("web/1").Local("host", "h")
	b.Peer("cluster").ID(7).Unit("db/1", "address", "10.0.0.2").App("primary", "db/0")
	b.Requires("logs", "syslog").Container().RemoteApp("format", "json")
	u := b.Universe()

	if u.API != charmapi.API || u.Unit != "db/0" || u.Service != "db" || !u.Leader || u.Life != "alive" || u.Attempt != 1 || u.Address != "127.0.0.1" {
		t.Errorf("universe: %+v", u)
	}
	if v, ok := u.Config["port"].(float64); !ok || v != 6379 {
		t.Errorf("config port = %#v; want float64 6379, as decoded from JSON", u.Config["port"])
	}
	var idents []string
	for _, r := range u.Relations {
		idents = append(idents, r.Ident+"/"+r.Role+"/"+r.Interface+"/"+r.Scope+"/"+r.RemoteService)
	}
	if got := strings.Join(idents, " "); got != "db:0/provides/kv/global/web logs:2/requires/logs/container/syslog cluster:7/peer/cluster/global/db" {
		t.Errorf("relations: %s", got)
	}
	if u.Relation("db").Get("web/0", "database") != "shop" || u.Relation("db").Member("web/1") == nil ||
		u.Relation("cluster").AppValue("primary") != "db/0" || u.Relation("logs").RemoteAppValue("format") != "json" ||
		u.Relation("db").Local["host"] != "h" || u.LeaderData["seed"] != "x" {
		t.Errorf("settings: %+v", u.Relations)
	}
	// Each call is a fresh copy.
	u.Relations[0].Units["web/0"]["database"] = "changed"
	if b.Universe().Relation("db").Get("web/0", "database") != "shop" {
		t.Error("Universe returned shared maps")
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "key, value pairs") {
			t.Errorf("odd pairs: recover() = %v", r)
		}
	}()
	b.Peer("x").Unit("db/2", "lonely")
}

func TestLoadUniverseAndRun(t *testing.T) {
	u := LoadUniverse(t, filepath.Join("testdata", "db0.json"))
	grant := func(u *charmapi.Universe) (*charmapi.Result, error) {
		res := charmapi.NewResult()
		for _, rel := range u.RelationsNamed("db") {
			res.Local(rel.Ident).Set("allowed-units", charmapi.JoinUnits(rel.MembersWith("database")))
		}
		if u.Leader {
			res.App(u.Relation("cluster").Ident).Set("primary", u.Unit)
		}
		res.OpenPort(fmt.Sprint(u.Options().Int("port", 0)) + "/tcp")
		return res.Active("ok"), nil
	}
	res := Run(t, Func(grant), u)
	res.ExpectLocal("db:1", map[string]string{"allowed-units": "web/0 web/1"}).
		ExpectApp("cluster:0", map[string]string{"primary": "db/0"}).
		ExpectApp("db:1", nil).
		ExpectLocal("cluster:0", nil).
		ExpectRelations("cluster:0", "db:1").
		ExpectStatus("active", "ok").
		ExpectPorts("6379/tcp").
		ExpectLeaderData(nil).
		ExpectState(nil).
		ExpectLocalKey("db:1", "allowed-units", "web/0 web/1")
	if res.Dir == "" {
		t.Error("no unit directory")
	}

	if _, err := ParseUniverse([]byte(`{"unit": "db/0",`)); err == nil || !strings.Contains(err.Error(), "1:") {
		t.Errorf("bad JSON: %v", err)
	}
}

// fakeT records what an assertion reports instead of failing the test.
type fakeT struct {
	testing.TB
	real   *testing.T
	fatal  string
	errors []string
}

func (f *fakeT) Helper()                  {}
func (f *fakeT) TempDir() string          { return f.real.TempDir() }
func (f *fakeT) Context() context.Context { return f.real.Context() }
func (f *fakeT) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// capture runs fn with a fakeT, as a test body would run.
func capture(t *testing.T, fn func(tb testing.TB)) *fakeT {
	f := &fakeT{real: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f
}

func TestRunReportsWhatIsWrong(t *testing.T) {
	u := NewUniverse("web/0").Requires("db", "db").Unit("db/0", "host", "h").Universe()

	f := capture(t, func(tb testing.TB) {
		Run(tb, Func(func(u *charmapi.Universe) (*charmapi.Result, error) {
			res := charmapi.NewResult()
			res.Local("db:0").Set("asked-at", time.Now().Format(time.RFC3339Nano))
			return res, nil
		}), u)
	})
	if !strings.Contains(f.fatal, "not a function of its universe") || !strings.Contains(f.fatal, "relations.db:0.local.asked-at") {
		t.Errorf("a timestamp went unnoticed: %q", f.fatal)
	}

	f = capture(t, func(tb testing.TB) {
		Run(tb, Func(func(u *charmapi.Universe) (*charmapi.Result, error) {
			return &charmapi.Result{Status: &charmapi.Status{State: "happy"}}, nil
		}), u)
	})
	if !strings.Contains(f.fatal, `status.state: status state must be "active", "blocked", "waiting", "maintenance" or "unknown"; got "happy"`) {
		t.Errorf("bad status: %q", f.fatal)
	}

	f = capture(t, func(tb testing.TB) {
		res := Run(tb, Func(func(u *charmapi.Universe) (*charmapi.Result, error) {
			res := charmapi.NewResult()
			res.Local("db:0").Set("database", "shop").Set("extra", "1")
			return res.Waiting("waiting for db access"), nil
		}), u)
		res.ExpectLocal("db:0", map[string]string{"database": "orders", "user": "web"}).
			ExpectStatus("active", "connected").
			ExpectApp("db:0", map[string]string{"x": "y"}).
			ExpectRelations("db:0", "cluster:1")
	})
	got := strings.Join(f.errors, "\n")
	for _, want := range []string{
		`database: "shop", want "orders"`, `extra: "1" is set, want it unset`, `user: unset, want "web"`,
		`status = waiting "waiting for db access"; want active "connected"`,
		"relations.db:0.app is not written", "result writes relations [db:0]; want [cluster:1 db:0]",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("errors lack %q:\n%s", want, got)
		}
	}
}

func TestTryReturnsTheEnginesErrors(t *testing.T) {
	u := NewUniverse("web/0").Requires("db", "db").Universe()
	_, err := Try(t.Context(), Func(func(u *charmapi.Universe) (*charmapi.Result, error) {
		res := charmapi.NewResult()
		res.App("db:0").Set("a", "b")
		return res, nil
	}), u, t.TempDir())
	var re *engine.ResultError
	if !errors.As(err, &re) || !strings.Contains(re.Msg, "only the leader writes the application bag") {
		t.Errorf("follower writing the app bag: %v", err)
	}
	_, err = Try(t.Context(), Func(func(u *charmapi.Universe) (*charmapi.Result, error) {
		return nil, errors.New("no database yet")
	}), u, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "no database yet") {
		t.Errorf("returned error: %v", err)
	}
}

func TestExecHook(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	dir := t.TempDir()
	hook := filepath.Join(dir, "reconcile")
	script := `#!/bin/sh
# Echo the unit name from the environment and the universe file's presence.
test -f "$FIXPOINT_UNIVERSE" || { echo "no universe file" >&2; exit 1; }
pwd > where
printf '{"status":{"state":"active","message":"%s"}}\n' "$FIXPOINT_UNIT"
`
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	res := Run(t, Exec(hook), NewUniverse("web/3").Universe())
	res.ExpectStatus("active", "web/3")
	where, err := os.ReadFile(filepath.Join(res.Dir, "where"))
	if err != nil || strings.TrimSpace(string(where)) != res.Dir {
		t.Errorf("the hook ran in %q (%v); want the unit directory %s", where, err, res.Dir)
	}

	failing := filepath.Join(dir, "fail")
	if err := os.WriteFile(failing, []byte("#!/bin/sh\necho boom >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = Try(t.Context(), Exec(failing), NewUniverse("web/3").Universe(), t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "exited with status 3: boom") {
		t.Errorf("failing hook: %v", err)
	}
}

func TestEventsBetween(t *testing.T) {
	before := NewUniverse("web/0").Requires("db", "db").Unit("db/0", "host", "a").Universe()
	first, err := EventsBetween(nil, before)
	if err != nil {
		t.Fatal(err)
	}
	if got := eventList(first); got != "install; db-relation-created db:0; leader-settings-changed; config-changed; start; db-relation-joined db:0 db/0; db-relation-changed db:0 db/0" {
		t.Errorf("first run: %s", got)
	}
	after := NewUniverse("web/0").Requires("db", "db").Unit("db/0", "host", "b").Unit("db/1").Universe()
	evs, err := EventsBetween(before, after)
	if err != nil {
		t.Fatal(err)
	}
	if got := eventList(evs); got != "db-relation-joined db:0 db/1; db-relation-changed db:0 db/1; db-relation-changed db:0 db/0" {
		t.Errorf("steady: %s", got)
	}
}

func eventList(evs []charmapi.Event) string {
	var s []string
	for _, e := range evs {
		s = append(s, e.String())
	}
	return strings.Join(s, "; ")
}
