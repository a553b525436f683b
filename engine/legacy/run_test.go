package legacy

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
)

// envHook records the hook's Juju environment in the unit's trace.
const envHook = `printf '%s|%s|%s|%s|%s|%s|%s|%s|%s\n' "$JUJU_HOOK_NAME" "${JUJU_RELATION-unset}" "${JUJU_RELATION_ID-unset}" \
  "${JUJU_REMOTE_UNIT-unset}" "${JUJU_REMOTE_APP-unset}" "${JUJU_DEPARTING_UNIT-unset}" "$JUJU_UNIT_NAME" "$JUJU_MACHINE_ID" "$JUJU_MODEL_NAME" \
  >> "$FIXPOINT_UNIT_DIR/trace"
[ "$(pwd)" = "$CHARM_DIR" ] && [ "$JUJU_CHARM_DIR" = "$CHARM_DIR" ] || { echo "cwd $(pwd) is not the charm dir $CHARM_DIR" >&2; exit 1; }
[ "$(command -v relation-get)" = "${PATH%%:*}/relation-get" ] || { echo "hook tools are not first on PATH" >&2; exit 1; }`

func TestEventsRunInOrderWithJujuEnv(t *testing.T) {
	hooks := map[string]string{}
	for _, h := range []string{"install", "leader-settings-changed", "config-changed", "start",
		"db-relation-created", "db-relation-joined", "db-relation-changed", "db-relation-departed", "old-relation-broken"} {
		hooks[h] = envHook
	}
	charm := writeCharm(t, hooks)
	u := testUniverse()
	u.Events = []charmapi.Event{
		ev("install", "", "", "", ""),
		ev("db-relation-created", "db:3", "", "db", ""),
		ev("leader-settings-changed", "", "", "", ""),
		ev("config-changed", "", "", "", ""),
		ev("start", "", "", "", ""),
		ev("db-relation-departed", "db:3", "db/7", "db", "db/7"),
		ev("db-relation-changed", "db:3", "", "db", ""),
		ev("db-relation-joined", "db:3", "db/1", "db", ""),
		ev("db-relation-changed", "db:3", "db/1", "db", ""),
		ev("old-relation-broken", "old:9", "", "logs", ""),
	}
	res, stats, unitDir, err := runHooks(t, charm, u)
	if err != nil {
		t.Fatal(err)
	}
	equalLines(t, "hook environments", trace(t, unitDir), []string{
		"install|unset|unset|unset|unset|unset|web/0|m1|shop",
		"db-relation-created|db|db:3|unset|db|unset|web/0|m1|shop",
		"leader-settings-changed|unset|unset|unset|unset|unset|web/0|m1|shop",
		"config-changed|unset|unset|unset|unset|unset|web/0|m1|shop",
		"start|unset|unset|unset|unset|unset|web/0|m1|shop",
		"db-relation-departed|db|db:3|db/7|db|db/7|web/0|m1|shop",
		"db-relation-changed|db|db:3|unset|db|unset|web/0|m1|shop",
		"db-relation-joined|db|db:3|db/1|db|unset|web/0|m1|shop",
		"db-relation-changed|db|db:3|db/1|db|unset|web/0|m1|shop",
		"old-relation-broken|old|old:9|unset|logs|unset|web/0|m1|shop",
	})
	if stats.HooksRun != 10 || len(stats.Skipped) != 0 {
		t.Errorf("stats = %+v", stats)
	}
	// Juju's uniter sets "unknown" after start when the charm set none.
	if !reflect.DeepEqual(res, &charmapi.Result{Status: &charmapi.Status{State: "unknown"}}) {
		t.Errorf("hooks that set nothing returned %+v; want a result of status unknown alone", res)
	}
}

func TestMissingHooksAreSkipped(t *testing.T) {
	charm := writeCharm(t, map[string]string{"start": envHook})
	u := testUniverse()
	u.Events = []charmapi.Event{ev("install", "", "", "", ""), ev("config-changed", "", "", "", ""), ev("start", "", "", "", ""),
		ev("db-relation-joined", "db:3", "db/1", "db", "")}
	_, stats, unitDir, err := runHooks(t, charm, u)
	if err != nil {
		t.Fatal(err)
	}
	if stats.HooksRun != 1 || !reflect.DeepEqual(stats.Hooks, []string{"start"}) ||
		!reflect.DeepEqual(stats.Skipped, []string{"install", "config-changed", "db-relation-joined"}) {
		t.Errorf("stats = %+v", stats)
	}
	if got := trace(t, unitDir); len(got) != 1 || !strings.HasPrefix(got[0], "start|") {
		t.Errorf("trace = %v", got)
	}
}

func TestRelationGetSeesOwnWritesAndTheUniverseAsItWas(t *testing.T) {
	charm := writeCharm(t, map[string]string{
		"db-relation-joined": `
relation-set database=shop "note=hello world"
relation-get - "$JUJU_UNIT_NAME" > "$FIXPOINT_UNIT_DIR/own.yaml"
relation-get database "$JUJU_UNIT_NAME" > "$FIXPOINT_UNIT_DIR/own-key"
relation-get host > "$FIXPOINT_UNIT_DIR/remote-host"
relation-get --format=json > "$FIXPOINT_UNIT_DIR/remote.json"`,
		"db-relation-changed": `
# a later hook of the same reconcile sees the earlier hook's writes
relation-get database "$JUJU_UNIT_NAME" > "$FIXPOINT_UNIT_DIR/later-key"
relation-set -r db:3 database=final`,
	})
	u := testUniverse()
	u.Events = []charmapi.Event{ev("db-relation-joined", "db:3", "db/0", "db", ""), ev("db-relation-changed", "db:3", "db/0", "db", "")}
	res, _, unitDir, err := runHooks(t, charm, u)
	if err != nil {
		t.Fatal(err)
	}
	read := func(name string) string { return readUnitFile(t, unitDir, name) }
	if got, want := read("own.yaml"), "database: shop\nkeep: \"yes\"\nnote: hello world\nprivate-address: 10.0.0.5\n"; got != want {
		t.Errorf("own settings:\n%s\nwant:\n%s", got, want)
	}
	if got := read("own-key"); got != "shop\n" {
		t.Errorf("own key = %q", got)
	}
	if got := read("later-key"); got != "shop\n" {
		t.Errorf("next hook's read of own key = %q", got)
	}
	if got := read("remote-host"); got != "10.0.0.1\n" {
		t.Errorf("remote host = %q", got)
	}
	if got, want := read("remote.json"), `{"host":"10.0.0.1","port":"6379","private-address":"10.0.0.1"}`+"\n"; got != want {
		t.Errorf("remote json = %q; want %q", got, want)
	}
	// The whole resulting bag: the universe's local settings plus writes.
	want := &charmapi.Result{Relations: map[string]charmapi.RelationResult{"db:3": {Local: map[string]string{
		"private-address": "10.0.0.5", "database": "final", "keep": "yes", "note": "hello world"}}}}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("result = %+v; want %+v", res, want)
	}
	if u.Relations[1].Local["database"] != "old" {
		t.Error("Run changed the caller's universe")
	}
}

func TestFailingHookFailsTheCallAndKeepsNothing(t *testing.T) {
	charm := writeCharm(t, map[string]string{
		"install":             `relation-set -r db:3 written=before-failure; leader-set x=1 2>/dev/null || true; status-set active fine`,
		"db-relation-changed": `echo "starting" ; echo "cannot reach $JUJU_REMOTE_UNIT" >&2; exit 3`,
		"start":               `echo ran >> "$FIXPOINT_UNIT_DIR/trace"`,
	})
	u := testUniverse()
	u.Events = []charmapi.Event{ev("install", "", "", "", ""), ev("db-relation-changed", "db:3", "db/1", "db", ""), ev("start", "", "", "", "")}
	res, stats, unitDir, err := runHooks(t, charm, u)
	if res != nil {
		t.Errorf("a failed run returned %+v; want nothing", res)
	}
	var herr *HookError
	if !errors.As(err, &herr) {
		t.Fatalf("error %v (%T); want a *HookError", err, err)
	}
	if herr.Hook != "db-relation-changed" || herr.Relation != "db:3" || herr.RemoteUnit != "db/1" || herr.Reason != "exit status 3" {
		t.Errorf("HookError = %+v", herr)
	}
	for _, part := range []string{`"db-relation-changed"`, "relation db:3", "remote unit db/1", "exit status 3", "cannot reach db/1"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not say %q", err, part)
		}
	}
	if strings.Contains(herr.Stderr, "starting") {
		t.Errorf("stderr tail %q has stdout in it", herr.Stderr)
	}
	if !reflect.DeepEqual(stats.Hooks, []string{"install", "db-relation-changed"}) {
		t.Errorf("hooks run = %v; want none after the failure", stats.Hooks)
	}
	if _, err := os.Stat(filepath.Join(unitDir, "trace")); err == nil {
		t.Error("a hook after the failing one ran")
	}
}

func TestRelationSetEmptyValueDeletes(t *testing.T) {
	charm := writeCharm(t, map[string]string{
		"config-changed": `relation-set -r db:3 keep= database= added=1
relation-set -r 3 added=2
printf 'from-file: one\nquoted: "a b"\n' | relation-set -r db:3 --file - added=3
printf 'x=1\n# comment\n\ny = 2\n' > "$FIXPOINT_UNIT_DIR/kv"
relation-set -r cluster:1 --file "$FIXPOINT_UNIT_DIR/kv"`,
	})
	u := testUniverse()
	u.Events = []charmapi.Event{ev("config-changed", "", "", "", "")}
	res, _, _, err := runHooks(t, charm, u)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]charmapi.RelationResult{
		"db:3":      {Local: map[string]string{"private-address": "10.0.0.5", "added": "3", "from-file": "one", "quoted": "a b"}},
		"cluster:1": {Local: map[string]string{"private-address": "10.0.0.5", "x": "1", "y": "2"}},
	}
	if !reflect.DeepEqual(res.Relations, want) {
		t.Errorf("relations = %+v; want %+v", res.Relations, want)
	}
}

func TestApplicationSettingsAreLeaderOnly(t *testing.T) {
	hook := `if relation-set --app -r db:3 ready=yes 2> "$FIXPOINT_UNIT_DIR/err"; then echo set > "$FIXPOINT_UNIT_DIR/trace"; else echo "refused $?" > "$FIXPOINT_UNIT_DIR/trace"; fi`
	charm := writeCharm(t, map[string]string{"config-changed": hook})

	u := testUniverse()
	u.Events = []charmapi.Event{ev("config-changed", "", "", "", "")}
	res, _, unitDir, err := runHooks(t, charm, u)
	if err != nil {
		t.Fatal(err)
	}
	equalLines(t, "follower", trace(t, unitDir), []string{"refused 1"})
	if b, _ := os.ReadFile(filepath.Join(unitDir, "err")); string(b) != "ERROR cannot write application settings: not the leader\n" {
		t.Errorf("stderr = %q", b)
	}
	if len(res.Relations) != 0 {
		t.Errorf("a follower's refused app write reached the result: %+v", res.Relations)
	}

	u = testUniverse()
	u.Leader = true
	u.Events = []charmapi.Event{ev("config-changed", "", "", "", "")}
	res, _, unitDir, err = runHooks(t, charm, u)
	if err != nil {
		t.Fatal(err)
	}
	equalLines(t, "leader", trace(t, unitDir), []string{"set"})
	if got := res.Relations["db:3"]; !reflect.DeepEqual(got, charmapi.RelationResult{App: map[string]string{"ready": "yes"}}) {
		t.Errorf("leader's db:3 result = %+v", got)
	}
}

func TestLeaderDataStatusAndPorts(t *testing.T) {
	charm := writeCharm(t, map[string]string{
		"leader-elected": `leader-set primary="$JUJU_UNIT_NAME" stale=
status-set maintenance "configuring"
open-port 80
open-port 8000-8010/udp
close-port 443/tcp
opened-ports > "$FIXPOINT_UNIT_DIR/ports"
leader-get primary > "$FIXPOINT_UNIT_DIR/primary"
status-get > "$FIXPOINT_UNIT_DIR/status"`,
		"start": `status-set active "ready to serve"`,
	})
	u := testUniverse()
	u.Leader = true
	u.LeaderData = map[string]string{"primary": "web/1", "stale": "x", "other": "y"}
	u.Events = []charmapi.Event{ev("leader-elected", "", "", "", ""), ev("start", "", "", "", "")}
	res, _, unitDir, err := runHooks(t, charm, u, func(o *Options) {
		o.Ports = []string{"443/tcp", "22"}
		o.Status = &charmapi.Status{State: "waiting", Message: "was waiting"}
	})
	if err != nil {
		t.Fatal(err)
	}
	want := &charmapi.Result{
		LeaderData: map[string]string{"primary": "web/0", "other": "y"},
		Status:     &charmapi.Status{State: "active", Message: "ready to serve"},
		Ports:      []string{"22/tcp", "80/tcp", "8000-8010/udp"},
	}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("result = %+v; want %+v", res, want)
	}
	for name, want := range map[string]string{"ports": "22/tcp\n80/tcp\n8000-8010/udp\n", "primary": "web/0\n", "status": "maintenance\n"} {
		if b, _ := os.ReadFile(filepath.Join(unitDir, name)); string(b) != want {
			t.Errorf("%s = %q; want %q", name, b, want)
		}
	}
}

func TestToolUsageErrorsThroughTheBinary(t *testing.T) {
	// Each line: exit code, then stderr.
	charm := writeCharm(t, map[string]string{"install": `
try() { set +e; "$@" > /dev/null 2> "$FIXPOINT_UNIT_DIR/err"; rc=$?; set -e; printf '%s %s\n' "$rc" "$(cat "$FIXPOINT_UNIT_DIR/err")" >> "$FIXPOINT_UNIT_DIR/trace"; }
try relation-get
try relation-set foo
try relation-get -r db:99 - db/0
try config-get --bogus
try status-set bogus
try relation-list -r
try unit-get
try leader-set a=1
try relation-get -r db:3 - db/9`})
	u := testUniverse()
	u.Events = []charmapi.Event{ev("install", "", "", "", "")}
	if _, _, unitDir, err := runHooks(t, charm, u); err != nil {
		t.Fatal(err)
	} else {
		equalLines(t, "usage errors", trace(t, unitDir), []string{
			"2 ERROR no relation id specified",
			"2 ERROR no relation id specified",
			`2 ERROR invalid value "db:99" for flag -r: relation not found`,
			"2 ERROR flag provided but not defined: --bogus",
			`2 ERROR invalid status "bogus", expected one of [maintenance blocked waiting active]`,
			"2 ERROR flag needs an argument: -r",
			"2 ERROR no setting specified",
			"1 ERROR cannot write leadership settings: cannot write settings: not the leader",
			`1 ERROR cannot read settings for unit "db/9" in relation "db:3": unit is not a member`,
		})
	}
}

func TestTimeoutKillsTheHook(t *testing.T) {
	charm := writeCharm(t, map[string]string{"install": `relation-set -r db:3 a=1; sleep 60 & wait`})
	u := testUniverse()
	u.Events = []charmapi.Event{ev("install", "", "", "", "")}
	start := time.Now()
	res, _, _, err := runHooks(t, charm, u, func(o *Options) { o.Timeout = 300 * time.Millisecond })
	if res != nil || err == nil || !strings.Contains(err.Error(), `hook "install" failed: timed out after 300ms`) {
		t.Fatalf("result %+v, error %v; want a timeout", res, err)
	}
	// The whole process group went, the sleeping child too: Run did not
	// wait the minute out.
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("Run took %s after a 300ms timeout", took)
	}
}

func TestTimeoutBoundsEachHookNotTheCall(t *testing.T) {
	// Three hooks that each take well under the timeout but together
	// more: the call succeeds, as the hooks would one by one in Juju.
	const nap = "sleep 1.2"
	charm := writeCharm(t, map[string]string{"install": nap, "config-changed": nap, "start": nap + "; relation-set -r db:3 a=1"})
	u := testUniverse()
	u.Events = []charmapi.Event{ev("install", "", "", "", ""), ev("config-changed", "", "", "", ""), ev("start", "", "", "", "")}
	res, stats, _, err := runHooks(t, charm, u, func(o *Options) { o.Timeout = 3 * time.Second })
	if err != nil || stats.HooksRun != 3 {
		t.Fatalf("ran %d hooks: %v", stats.HooksRun, err)
	}
	if got := res.Relations["db:3"].Local["a"]; got != "1" {
		t.Errorf("db:3 a = %q; want the last hook's write", got)
	}
}

func TestCancelledCallSaysSo(t *testing.T) {
	charm := writeCharm(t, map[string]string{"install": "sleep 60 & wait"})
	u := testUniverse()
	u.Events = []charmapi.Event{ev("install", "", "", "", "")}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, _, err := Run(ctx, Options{CharmDir: charm, UnitDir: t.TempDir(), ToolsBinary: toolBinary, ShellBinary: shellBinary}, u)
	if err == nil || !strings.Contains(err.Error(), `hook "install" failed: cancelled`) {
		t.Fatalf("error %v; want the hook cancelled with the call", err)
	}
}

func TestRunRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	if _, _, err := Run(ctx, Options{CharmDir: t.TempDir()}, nil); err == nil {
		t.Error("nil universe: no error")
	}
	if _, _, err := Run(ctx, Options{}, testUniverse()); err == nil {
		t.Error("no charm dir: no error")
	}
	if _, _, err := Run(ctx, Options{CharmDir: filepath.Join(t.TempDir(), "missing")}, testUniverse()); err == nil {
		t.Error("missing charm dir: no error")
	}
	charm := writeCharm(t, nil)
	if err := os.WriteFile(filepath.Join(charm, "hooks", "install"), []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	u := testUniverse()
	u.Events = []charmapi.Event{ev("install", "", "", "", "")}
	if _, _, _, err := runHooks(t, charm, u); err == nil || !strings.Contains(err.Error(), "not executable") {
		t.Errorf("non-executable hook: %v", err)
	}
	u.Events = []charmapi.Event{ev("../install", "", "", "", "")}
	if _, _, _, err := runHooks(t, charm, u); err == nil {
		t.Error("hook name with a path: no error")
	}
	// No events: nothing runs, nothing changes.
	u.Events = nil
	if res, stats, _, err := runHooks(t, charm, u); err != nil || stats.HooksRun != 0 || !reflect.DeepEqual(res, &charmapi.Result{}) {
		t.Errorf("no events: %+v %+v %v", res, stats, err)
	}
}

func TestDeepTempDirStillGetsASocket(t *testing.T) {
	deep := t.TempDir()
	for len(deep) < 2*maxSocketPath {
		deep = filepath.Join(deep, "a-rather-long-directory-name")
	}
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", deep)
	charm := writeCharm(t, map[string]string{"install": `is-leader > "$FIXPOINT_UNIT_DIR/trace"`})
	u := testUniverse()
	u.Events = []charmapi.Event{ev("install", "", "", "", "")}
	_, _, unitDir, err := runHooks(t, charm, u)
	if err != nil {
		t.Fatal(err)
	}
	equalLines(t, "is-leader", trace(t, unitDir), []string{"False"})
}

// Old hooks get Juju's context and the hook tools' socket and token, and
// nothing of the agent's own environment beyond PATH, HOME, locale and
// TMPDIR: not its credential, not an operator's secret.
func TestHookEnvironmentHoldsNoAgentSecrets(t *testing.T) {
	t.Setenv("FIXPOINT_TOKEN", "agent-credential")
	t.Setenv("SECRET_X", "operator-secret")
	charm := writeCharm(t, map[string]string{"install": `env > "$FIXPOINT_UNIT_DIR/env"`})
	u := testUniverse()
	u.Events = []charmapi.Event{ev("install", "", "", "", "")}
	_, _, unitDir, err := runHooks(t, charm, u, func(o *Options) { o.Env = []string{"FIXPOINT_UNIT=web/0"} })
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(unitDir, "env"))
	if err != nil {
		t.Fatal(err)
	}
	env := string(b)
	for _, bad := range []string{"FIXPOINT_TOKEN=", "agent-credential", "SECRET_X", "operator-secret"} {
		if strings.Contains(env, bad) {
			t.Errorf("the hook saw %q:\n%s", bad, env)
		}
	}
	for _, want := range []string{"\nFIXPOINT_UNIT=web/0\n", "\nJUJU_UNIT_NAME=web/0\n", "\n" + EnvToken + "=", "\n" + EnvSocket + "=", "\nPATH="} {
		if !strings.Contains("\n"+env, want) {
			t.Errorf("the hook lacks %q:\n%s", strings.TrimSpace(want), env)
		}
	}
}

// An old hook that leaves a process in a session of its own holding its
// output (`setsid sleep 900 &`) finishes when it exits, and that process
// is ended with it.
func TestEscapedProcessEndsWithTheHook(t *testing.T) {
	charm := writeCharm(t, map[string]string{"install": `f="$FIXPOINT_UNIT_DIR/sleeper.pid"
setsid sh -c 'echo $$ > "$0.tmp" && mv "$0.tmp" "$0"; exec sleep 900' "$f" &
until [ -s "$f" ]; do sleep 0.01; done
relation-set -r db:3 a=1`})
	u := testUniverse()
	u.Events = []charmapi.Event{ev("install", "", "", "", "")}
	res, _, unitDir, err := runHooks(t, charm, u, func(o *Options) { o.Timeout = 10 * time.Minute })
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Relations["db:3"].Local["a"]; got != "1" {
		t.Errorf("db:3 a = %q; want the hook's write", got)
	}
	b, err := os.ReadFile(filepath.Join(unitDir, "sleeper.pid"))
	if err != nil {
		t.Fatal(err)
	}
	stat, err := os.ReadFile("/proc/" + strings.TrimSpace(string(b)) + "/stat")
	if err == nil && !strings.Contains(string(stat), ") Z ") {
		t.Fatalf("the hook's setsid sleeper %s still runs after the hook", strings.TrimSpace(string(b)))
	}
}

// TestDyingUnitReadsItsOwnSettings is a dying unit's last reconcile: its
// universe lists no relations, and its -relation-departed and
// -relation-broken hooks read its own settings from leaving, as Juju's
// relation-get answers them while the unit is still in the relation.
func TestDyingUnitReadsItsOwnSettings(t *testing.T) {
	read := `relation-get - "$JUJU_UNIT_NAME" --format=json >> "$FIXPOINT_UNIT_DIR/trace"
relation-get database "$JUJU_UNIT_NAME" >> "$FIXPOINT_UNIT_DIR/trace"`
	charm := writeCharm(t, map[string]string{"db-relation-departed": read, "db-relation-broken": read})
	u := testUniverse()
	u.Life, u.Relations = "dying", nil
	u.Leaving = map[string]map[string]string{"db:3": {"private-address": "10.0.0.5", "database": "shop"}}
	u.Events = []charmapi.Event{ev("db-relation-departed", "db:3", "db/0", "db", "web/0"), ev("db-relation-broken", "db:3", "", "db", "")}
	forEachShell(t, func(t *testing.T, shell func(*Options)) {
		_, _, unitDir, err := runHooks(t, charm, u, shell)
		if err != nil {
			t.Fatal(err)
		}
		own := `{"database":"shop","private-address":"10.0.0.5"}`
		equalLines(t, "own settings read in departed and broken", trace(t, unitDir), []string{own, "shop", own, "shop"})
	})
}

// TestMachineIDIsJujus: hooks read the machine's Juju id as
// JUJU_MACHINE_ID (charms parse it as a number); a universe without one
// (a machine registered before ids) gives the machine's name.
func TestMachineIDIsJujus(t *testing.T) {
	charm := writeCharm(t, map[string]string{"install": `echo "$JUJU_MACHINE_ID" >> "$FIXPOINT_UNIT_DIR/trace"`})
	u := testUniverse()
	u.Events = []charmapi.Event{ev("install", "", "", "", "")}
	u.MachineID = "3"
	_, _, unitDir, err := runHooks(t, charm, u)
	if err != nil {
		t.Fatal(err)
	}
	u.MachineID = ""
	_, _, unitDir2, err := runHooks(t, charm, u)
	if err != nil {
		t.Fatal(err)
	}
	equalLines(t, "JUJU_MACHINE_ID", append(trace(t, unitDir), trace(t, unitDir2)...), []string{"3", "m1"})
}
