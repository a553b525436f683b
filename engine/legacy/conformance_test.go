package legacy

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/fixpoint/fixpoint/charmapi"
)

// conformanceCharm packs canonical/operator's test charm
// (shared/thirdparty/juju-conformance/operator/test/charms/<name>) as
// charmcraft would for these tests: charmcraft.yaml split into
// metadata.yaml, config.yaml and actions.yaml, charmcraft's dispatch, and
// the ops framework in venv/. It skips the test when either is missing.
func conformanceCharm(t *testing.T, name string) string {
	t.Helper()
	fw := opsFramework(filepath.Join("..", ".."))
	if fw == "" {
		t.Skip("Canonical's ops framework is not beside the checkout (../shared/thirdparty/python-ops)")
	}
	src := filepath.Join(filepath.Dir(filepath.Dir(fw)), "thirdparty", "juju-conformance", "operator", "test", "charms", name)
	raw, err := os.ReadFile(filepath.Join(src, "charmcraft.yaml"))
	if err != nil {
		t.Skipf("canonical/operator's test charms are not beside the checkout: %v", err)
	}
	dir := filepath.Join(t.TempDir(), name)
	for _, cp := range [][2]string{{src, dir}, {fw, filepath.Join(dir, "venv")}} {
		if out, err := exec.Command("cp", "-a", cp[0], cp[1]).CombinedOutput(); err != nil {
			t.Fatalf("cp %s: %v\n%s", cp[0], err, out)
		}
	}
	var meta map[string]any
	if err := yaml.Unmarshal(raw, &meta); err != nil {
		t.Fatalf("%s/charmcraft.yaml: %v", name, err)
	}
	files := map[string]any{"metadata.yaml": meta}
	if c, ok := meta["config"]; ok {
		files["config.yaml"] = c
	}
	if a, ok := meta["actions"]; ok {
		files["actions.yaml"] = a
	}
	for _, k := range []string{"config", "actions", "parts", "platforms", "base", "build-base", "type"} {
		delete(meta, k)
	}
	for file, v := range files {
		b, err := yaml.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, file), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dispatch := "#!/bin/sh\nJUJU_DISPATCH_PATH=\"${JUJU_DISPATCH_PATH:-$0}\" PYTHONPATH=lib:venv:src exec /usr/bin/python3 ./src/charm.py\n"
	if err := os.WriteFile(filepath.Join(dir, "dispatch"), []byte(dispatch), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// hookcmdsUniverse is test-hookcmds/0, the leader, with its peer and with
// any-charm over anycharm, as test_hookcmds.py deploys it.
func hookcmdsUniverse() *charmapi.Universe {
	return &charmapi.Universe{
		API: charmapi.API, Unit: "test-hookcmds/0", Service: "test-hookcmds", Charm: "sha256:c", Life: "alive", Leader: true,
		Machine: "0", Address: "127.0.0.1",
		Config:     map[string]any{"string-opt": "hello", "int-opt": 42.0, "reboot-trigger": ""},
		LeaderData: map[string]string{}, State: map[string]string{},
		Relations: []charmapi.Relation{
			{Ident: "peer:0", ID: 0, Name: "peer", Interface: "test-hookcmds-peer", Role: "peer", RemoteService: "test-hookcmds",
				Local: map[string]string{"private-address": "127.0.0.1"}, App: map[string]string{}, RemoteApp: map[string]string{},
				Units: map[string]map[string]string{"test-hookcmds/1": {"private-address": "127.0.0.1"}}},
			{Ident: "anycharm:1", ID: 1, Name: "anycharm", Interface: "db", Role: "requires", RemoteService: "any-charm",
				Local: map[string]string{"private-address": "127.0.0.1"}, App: map[string]string{}, RemoteApp: map[string]string{},
				Units: map[string]map[string]string{"any-charm/0": {"private-address": "127.0.0.1"}}},
		},
	}
}

// runHookcmdsAction runs one action of test-hookcmds on u and returns
// its outcome, failing the test when it could not run or failed.
func runHookcmdsAction(t *testing.T, charm string, u *charmapi.Universe, name string, params map[string]any, tweak ...func(*Options)) *ActionOutcome {
	t.Helper()
	opts := Options{CharmDir: charm, UnitDir: t.TempDir(), ToolsBinary: toolBinary, ShellBinary: shellBinary, Model: "conformance"}
	for _, f := range tweak {
		f(&opts)
	}
	out, err := RunAction(context.Background(), opts, u, Action{ID: 1, Name: name, Params: params})
	if err != nil {
		t.Fatalf("action %s: %v", name, err)
	}
	if out.Failed {
		t.Fatalf("action %s failed: %s; results %v", name, out.Message, out.Results)
	}
	return out
}

// jsonResult decodes the action result key, which the charm wrote as
// JSON text.
func jsonResult(t *testing.T, out *ActionOutcome, key string, v any) {
	t.Helper()
	s, _ := out.Results[key].(string)
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("result %s = %q: %v", key, s, err)
	}
}
