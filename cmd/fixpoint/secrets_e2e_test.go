package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine/api"
)

// The values the owner's leader puts in its shared secret (testdata/ops/
// ops-secrets): they must reach the user's hooks and nothing at rest.
var secretValues = []string{"owner-value-v1-5d1e", "owner-value-v2-8a2c"}

// secretsEnv writes the environment: the owner (two units, at step) and
// the user, related over share/use.
func secretsEnv(t *testing.T, dir, charm, step string) string {
	t.Helper()
	env := fmt.Sprintf(`apiVersion: "fixpoint/v1"
name: "secretshop"
services: {
	"sec-owner": {charm: %q, units: 2, config: {step: %q}}
	"sec-user": {charm: %q, units: 1}
}
relations: "shared": ["sec-owner:share", "sec-user:use"]
`, charm, step, charm)
	path := filepath.Join(dir, step+".cue")
	if err := os.WriteFile(path, []byte(env), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// snapshots reads what the charm recorded in secrets.json on unit.
func (r *opsRun) snapshots(t *testing.T, unit string) map[string]json.RawMessage {
	t.Helper()
	out := map[string]json.RawMessage{}
	if s := r.charmFile(t, unit, "secrets.json"); s != "" {
		if err := json.Unmarshal([]byte(s), &out); err != nil {
			t.Fatalf("%s: secrets.json: %v", unit, err)
		}
	}
	return out
}

// ownerLeader is the owner unit whose charm recorded the add step.
func (r *opsRun) ownerLeader(t *testing.T) string {
	t.Helper()
	for _, u := range []string{"sec-owner/0", "sec-owner/1"} {
		if _, ok := r.snapshots(t, u)["add-secret"]; ok {
			return u
		}
	}
	t.Fatalf("no owner unit recorded the add step:\n%s", r.up.out)
	return ""
}

func TestOpsSecretsEndToEnd(t *testing.T) {
	t.Parallel()
	fw := opsFrameworkDir()
	if fw == "" {
		t.Skip("Canonical's ops framework is not beside the checkout (../shared/thirdparty/python-ops): the ops charms cannot run")
	}
	if out, err := exec.Command("/usr/bin/python3", "-c", "import yaml, websocket").CombinedOutput(); err != nil {
		t.Fatalf("/usr/bin/python3 cannot import what ops needs: %v\n%s", err, out)
	}
	charm := packOps(t, fw, "ops-secrets", filepath.Join(t.TempDir(), "ops-secrets"))
	envs := t.TempDir()
	r := &opsRun{data: t.TempDir()}
	r.up = startUp(t, r.data, secretsEnv(t, envs, charm, "add"))
	r.status = r.up.waitConverged(t, 20*time.Minute)
	for name, u := range r.status.Units {
		if u.Phase != "settled" {
			t.Fatalf("add: %s is %s: %s", name, u.Phase, u.Error)
		}
	}

	// add-secret, add-with-meta and set-secret-flow, as test_secrets
	// snapshots them.
	leader := r.ownerLeader(t)
	snaps := r.snapshots(t, leader)
	type snap struct {
		ID      string            `json:"id"`
		Content map[string]string `json:"content"`
		Peek    map[string]string `json:"peek"`
		Info    struct {
			Label       *string `json:"label"`
			Revision    int     `json:"revision"`
			Expires     *string `json:"expires"`
			Rotation    *string `json:"rotation"`
			Description *string `json:"description"`
		} `json:"info"`
	}
	var added snap
	if err := json.Unmarshal(snaps["add-secret"], &added); err != nil || added.Content["foo"] != "bar" || added.Peek["foo"] != "bar" || added.Info.Revision != 1 || !strings.HasPrefix(added.ID, "secret:") {
		t.Errorf("add-secret: %s (%v)", snaps["add-secret"], err)
	}
	var combos map[string]snap
	if err := json.Unmarshal(snaps["add-with-meta"], &combos); err != nil || len(combos) != 16 {
		t.Fatalf("add-with-meta: %d combinations (%v)", len(combos), err)
	}
	for name, c := range combos {
		has := func(k string) bool { return name != "none" && strings.Contains(name, k) }
		if c.Content["foo"] != name || (c.Info.Label != nil) != has("label") || (c.Info.Description != nil && *c.Info.Description == "a description") != has("description") ||
			(c.Info.Expires != nil && strings.HasPrefix(*c.Info.Expires, "2030-01-02T03:04:05")) != has("expire") || (c.Info.Rotation != nil && *c.Info.Rotation == "daily") != has("rotate") {
			t.Errorf("add-with-meta %s: %+v", name, c)
		}
	}
	var flow struct{ Before, After snap }
	if err := json.Unmarshal(snaps["set-secret-flow"], &flow); err != nil || flow.Before.Content["foo"] != "bar" || flow.After.Content["foo"] != "baz" ||
		flow.After.Info.Description == nil || *flow.After.Info.Description != "set in the flow" {
		t.Errorf("set-secret-flow: %s (%v)", snaps["set-secret-flow"], err)
	}

	// The grant: the user reads the shared secret.
	r.apply(t, secretsEnv(t, envs, charm, "share"))
	var got map[string]string
	if err := json.Unmarshal(r.snapshots(t, "sec-user/0")["consumer-content"], &got); err != nil || got["password"] != secretValues[0] {
		t.Fatalf("share: the user read %v (%v)\n%s", got, err, r.charmFile(t, "sec-user/0", "events.log"))
	}

	// A new revision: secret-changed on the user, which still reads the
	// revision it tracks, peeks and refreshes; then secret-remove of
	// revision 1 on the owner's leader, which removes it.
	r.apply(t, secretsEnv(t, envs, charm, "update"))
	user := r.snapshots(t, "sec-user/0")
	for key, want := range map[string]string{"changed-tracked": secretValues[0], "changed-peek": secretValues[1], "changed-refreshed": secretValues[1]} {
		var c map[string]string
		if err := json.Unmarshal(user[key], &c); err != nil || c["password"] != want {
			t.Errorf("update: %s = %v (%v)", key, c, err)
		}
	}
	if log := r.charmFile(t, "sec-user/0", "events.log"); !strings.Contains(log, "secret-changed secret:") || !strings.Contains(log, " from-owner\n") {
		t.Errorf("update: the user's events:\n%s", log)
	}
	if _, ok := r.snapshots(t, leader)["removed-1"]; !ok {
		t.Errorf("update: the owner's leader got no secret-remove of revision 1; its events:\n%s", r.charmFile(t, leader, "events.log"))
	}
	if log := r.charmFile(t, leader, "events.log"); !strings.Contains(log, "secret-remove secret:") {
		t.Errorf("update: the owner's events:\n%s", log)
	}

	// The operator's view: listed without values; revealed on request.
	res := fixpoint(t, time.Minute, "secrets", "-o", "json", "--data-dir", r.data)
	var list []*api.SecretInfo
	if res.code != 0 || json.Unmarshal([]byte(res.stdout), &list) != nil {
		t.Fatalf("secrets: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	var shared *api.SecretInfo
	for _, s := range list {
		if s.Label == "shared" {
			shared = s
		}
	}
	if shared == nil || shared.Revision != 2 || len(shared.Grants) != 1 || shared.Grants[0].To != "sec-user" || len(shared.Consumers) != 1 || shared.Consumers[0].Tracked != 2 {
		t.Fatalf("secrets lists the shared secret as %+v", shared)
	}
	show := fixpoint(t, time.Minute, "show-secret", shared.ID, "--reveal", "--revisions", "-o", "json", "--data-dir", r.data)
	var one api.SecretInfo
	if show.code != 0 || json.Unmarshal([]byte(show.stdout), &one) != nil || one.Content["password"] != secretValues[1] || len(one.Revisions) != 1 {
		t.Errorf("show-secret --reveal: exit %d %s %s", show.code, show.stdout, show.stderr)
	}
	if plain := fixpoint(t, time.Minute, "show-secret", shared.ID, "--data-dir", r.data); strings.Contains(plain.stdout, secretValues[1]) {
		t.Errorf("show-secret without --reveal shows the value:\n%s", plain.stdout)
	}
	// A key rotation re-seals: the value still opens.
	if rot := fixpoint(t, time.Minute, "secrets", "rotate-key", "--data-dir", r.data); rot.code != 0 || !strings.Contains(rot.stdout, "is current") {
		t.Fatalf("secrets rotate-key: exit %d %s %s", rot.code, rot.stdout, rot.stderr)
	}
	show = fixpoint(t, time.Minute, "show-secret", shared.ID, "--reveal", "-o", "json", "--data-dir", r.data)
	one = api.SecretInfo{}
	if show.code != 0 || json.Unmarshal([]byte(show.stdout), &one) != nil || one.Content["password"] != secretValues[1] {
		t.Errorf("show-secret --reveal after the rotation: exit %d %s %s", show.code, show.stdout, show.stderr)
	}

	// At rest and on screen: no value in the control plane's files, a
	// saved backup, the logs or the status.
	backup := filepath.Join(t.TempDir(), "backup.json")
	if b := fixpoint(t, time.Minute, "cluster", "snapshot", "save", backup, "--data-dir", r.data); b.code != 0 {
		t.Fatalf("snapshot save: %s %s", b.stdout, b.stderr)
	}
	screens := map[string][]byte{}
	screens["backup"], _ = os.ReadFile(backup)
	screens["logs"] = []byte(fixpoint(t, time.Minute, "logs", "--data-dir", r.data).stdout)
	screens["status"] = []byte(fixpoint(t, time.Minute, "status", "-o", "json", "--data-dir", r.data).stdout)
	agentDir := filepath.Join(r.data, "agent")
	err := filepath.WalkDir(r.data, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == agentDir {
			// The agent's unit dirs are the charms' own: what a charm
			// writes there is its business.
			if path == agentDir {
				return fs.SkipDir
			}
			return err
		}
		if !d.IsDir() {
			screens[path], err = os.ReadFile(path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for where, b := range screens {
		for _, v := range secretValues {
			if bytes.Contains(b, []byte(v)) {
				t.Errorf("%s holds secret value %s in plaintext", where, v)
			}
		}
	}
}

// TestClusterSecretsAcrossALeaderChange runs the secrets flow on three
// servers and two agents, killing the Raft leader between the grant and
// the new revision: the new leader opens what the old one sealed (every
// server got the cluster key through its join), the user follows the new
// revision and the owner removes the old one.
func TestClusterSecretsAcrossALeaderChange(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts five processes; skipped in -short")
	}
	fw := opsFrameworkDir()
	if fw == "" {
		t.Skip("Canonical's ops framework is not beside the checkout (../shared/thirdparty/python-ops): the ops charms cannot run")
	}
	charm := packOps(t, fw, "ops-secrets", filepath.Join(t.TempDir(), "ops-secrets"))
	envs := t.TempDir()
	c := startCluster(t, 3, false)
	c.agent("m1")
	c.agent("m2")
	c.waitMachines("m1", "m2")
	apply := func(step string) {
		t.Helper()
		if r := c.cli("apply", "-f", secretsEnv(t, envs, charm, step), "--yes", "--wait", "--timeout", "10m"); r.code != 0 {
			t.Fatalf("apply %s: %d\n%s\n%s", step, r.code, r.stdout, r.stderr)
		}
	}
	// unitFile reads what a unit's charm wrote, on whichever machine.
	unitFile := func(unit, name string) string {
		for _, dir := range c.agentDirs {
			if b, err := os.ReadFile(filepath.Join(dir, "units", strings.ReplaceAll(unit, "/", "-"), "charm", name)); err == nil {
				return string(b)
			}
		}
		return ""
	}
	apply("add")
	apply("share")
	if s := unitFile("sec-user/0", "secrets.json"); !strings.Contains(s, secretValues[0]) {
		t.Fatalf("share: the user recorded %q", s)
	}

	li := c.waitLeader("a Raft leader", -1)
	c.sigkill(li)
	c.waitLeader("a new Raft leader", li)

	apply("update")
	var user map[string]any
	password := func(key string) any { m, _ := user[key].(map[string]any); return m["password"] }
	if err := json.Unmarshal([]byte(unitFile("sec-user/0", "secrets.json")), &user); err != nil ||
		password("changed-tracked") != secretValues[0] || password("changed-refreshed") != secretValues[1] {
		t.Errorf("update after the leader change: the user recorded %v (%v)", user, err)
	}
	removed := false
	for _, u := range []string{"sec-owner/0", "sec-owner/1"} {
		removed = removed || strings.Contains(unitFile(u, "secrets.json"), `"removed-1"`)
	}
	if !removed {
		t.Errorf("update after the leader change: no owner unit got secret-remove of revision 1")
	}
	// Every server's data dir holds the values sealed only.
	for i, dir := range c.dirs {
		_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			b, _ := os.ReadFile(path)
			for _, v := range secretValues {
				if bytes.Contains(b, []byte(v)) {
					t.Errorf("n%d: %s holds %s in plaintext", i+1, path, v)
				}
			}
			return nil
		})
	}
}
