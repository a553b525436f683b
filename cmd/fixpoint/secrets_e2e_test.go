package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine/api"
)

// TestOpsSecretsEndToEnd runs canonical/operator's test_secrets flow
// (secretsFlow) on up, then the operator's view of the credential and
// the at-rest check: no value of it in the control plane's files, a
// saved backup, the logs or the status.
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
	r := &opsRun{data: t.TempDir()}
	r.up = startUp(t, r.data, secretsEnv(t, t.TempDir(), charm))
	r.status = r.up.waitConverged(t, 20*time.Minute)
	for name, u := range r.status.Units {
		if u.Phase != "settled" {
			t.Fatalf("deploy: %s is %s: %s", name, u.Phase, u.Error)
		}
	}
	flow := &secretsFlow{t: t, cli: upCLI(t, r.data)}
	id := flow.run(nil)

	// The operator's view: listed without values; revealed on request.
	res := fixpoint(t, time.Minute, "secrets", "-o", "json", "--data-dir", r.data)
	var list []*api.SecretInfo
	if res.code != 0 || json.Unmarshal([]byte(res.stdout), &list) != nil {
		t.Fatalf("secrets: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	var shared *api.SecretInfo
	for _, s := range list {
		if s.ID == id {
			shared = s
		}
	}
	if shared == nil || shared.Label != "shared" || shared.Revision != 2 || shared.Owner != "application sec-owner" || shared.Content != nil {
		t.Fatalf("secrets lists the credential as %+v", shared)
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

// TestClusterSecretsAcrossALeaderChange runs the same flow on three
// servers and two agents, killing the Raft leader after the consumer saw
// secret-changed and before it refreshes: the new leader opens what the
// old one sealed (every server got the cluster key through its join),
// the consumer follows the new revision, the owner removes the old one,
// and the revoke that follows holds. Every server's data dir holds the
// credential sealed only.
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
	c := startCluster(t, 3, false)
	c.agent("m1")
	c.agent("m2")
	c.waitMachines("m1", "m2")
	if r := c.cli("apply", "-f", secretsEnv(t, t.TempDir(), charm), "--yes", "--wait", "--timeout", "10m"); r.code != 0 {
		t.Fatalf("apply: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	killed := -1
	flow := &secretsFlow{t: t, cli: c.cli}
	flow.run(func() {
		killed = c.waitLeader("a Raft leader", -1)
		c.sigkill(killed)
		c.waitLeader("a new Raft leader", killed)
	})
	if killed < 0 {
		t.Fatal("the flow never reached its middle")
	}
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
