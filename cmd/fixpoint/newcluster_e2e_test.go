package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// drSecret is the user secret's value: sealed in the backup, readable
// again from the new cluster with the kept key.
const drSecret = "dr-secret-value-51c0e7"

// drEnv writes the demo with a user secret into dir, and, with extra, a
// third service beside the demo's that no demo unit relates to.
func drEnv(t *testing.T, dir string, extra bool) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "dr.pass"), []byte(drSecret), 0o600); err != nil {
		t.Fatal(err)
	}
	more := ""
	if extra {
		more = fmt.Sprintf("\textra: {charm: %q, units: 1}\n", repo("testdata", "charms", "web"))
	}
	env := fmt.Sprintf(`apiVersion: "fixpoint/v1"
name: "shop"
services: {
	db: {charm: %q, units: 2, config: {max_connections: 200}}
	web: {charm: %q, units: 2}
%s}
relations: "web-db": ["web:db", "db:db"]
secrets: "dr-pass": {description: "kept sealed in backups", content: {password: file: "./dr.pass"}}
`, repo("testdata", "charms", "db"), repo("testdata", "charms", "web"), more)
	name := "env.cue"
	if extra {
		name = "env-extra.cue"
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(env), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestNewClusterFromBackup is docs/operating.md's "Backups and disaster
// recovery" word for word but for the addresses: three servers and an
// agent converge on the demo with a user secret; a backup is saved and
// the cluster key kept; all three servers die with their data dirs; the
// backup is restored onto three new data dirs on new ports; the agent,
// pointed at them, carries on with its credential, and no unit runs a
// hook again; a new machine registers with the join token. The secret
// stayed sealed in the backup and opens in the new cluster.
func TestNewClusterFromBackup(t *testing.T) {
	t.Parallel()
	testNewClusterFromBackup(t, false)
}

// Over TLS the new servers get certificates of the CA the operator kept,
// so the agent's --tls-ca stays as it is.
func TestNewClusterFromBackupOverTLS(t *testing.T) {
	t.Parallel()
	testNewClusterFromBackup(t, true)
}

func testNewClusterFromBackup(t *testing.T, withTLS bool) {
	if testing.Short() {
		t.Skip("starts seven processes; skipped in -short")
	}
	old := startCluster(t, 3, withTLS)
	old.agent("m1")
	old.waitMachines("m1")
	envDir := t.TempDir()
	env := drEnv(t, envDir, false)
	if r := old.cli("apply", "-f", env, "--yes", "--wait", "--timeout", "3m"); r.code != 0 {
		t.Fatalf("apply: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	before := old.state(old.addrs[0], false)
	if len(before.Units) != 4 || totalRuns(before) < 4 {
		t.Fatalf("after apply: %s", jsonString(before.Units))
	}

	// fixpoint cluster snapshot save /srv/backup/fixpoint.json
	// install -m 600 /var/lib/fixpoint/raft/secrets.key /root/fixpoint-secrets.key
	safe := t.TempDir()
	backup := filepath.Join(safe, "fixpoint.json")
	if r := old.cli("cluster", "snapshot", "save", backup); r.code != 0 {
		t.Fatalf("snapshot save: %d\n%s", r.code, r.stderr)
	}
	if data, err := os.ReadFile(backup); err != nil || strings.Contains(string(data), drSecret) {
		t.Fatalf("the backup (%v) holds the secret's value in the clear", err)
	}
	key := filepath.Join(safe, "fixpoint-secrets.key")
	copyPrivate(t, filepath.Join(old.dirs[0], "raft", raftstore.KeyFile), key)

	// Every server and its disk is lost.
	for i := range old.procs {
		old.sigkill(i)
		if err := os.RemoveAll(old.dirs[i]); err != nil {
			t.Fatal(err)
		}
	}

	// Restore onto a new machine: without the key it is refused.
	// The docs' --agent-ttl: time to point the agent at the new cluster.
	n := newCluster(t, "--agent-ttl", "30m")
	n.dirs = []string{t.TempDir()}
	n.tlsDir = old.tlsDir
	restore := []string{"cluster", "restore", backup, "--new-cluster", "--data-dir", n.dirs[0], "--token-file", old.tokenFile}
	if withTLS {
		// The join token is kept; without it, a new one is made.
		restore = append(restore, "--join-token-file", old.joinFile)
	}
	if r := fixpoint(t, time.Minute, restore...); r.code == 0 || !strings.Contains(r.stderr, "secrets.key") {
		t.Fatalf("restore without the key: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := fixpoint(t, time.Minute, append(restore, "--secrets-key", key)...); r.code != 0 {
		t.Fatalf("restore: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// fixpoint server --node-id n1 ... --bootstrap --agent-ttl 30m, then
	// n2 and n3 join.
	n.start(3, withTLS)
	if n.token != old.token {
		t.Fatal("the new cluster's data dir holds another operator token than the lost one's")
	}
	if newJoin := readFile(t, n.joinFile); (newJoin == readFile(t, old.joinFile)) != withTLS {
		t.Fatalf("the join token was kept: %v, want %v", !withTLS, withTLS)
	}
	// Only the new servers are members (raftstore's TestNewClusterFromBackup
	// tells the old members from the new by their ids).
	if ms := n.members(); len(ms) != 3 {
		t.Errorf("members %s, want the three new servers", jsonString(ms))
	} else {
		for _, m := range ms {
			if m.Unreachable || !m.Voter {
				t.Errorf("member %s does not answer or does not vote: %s", m.ID, jsonString(ms))
			}
		}
	}

	// The agent, restarted with --controller naming the new servers,
	// keeps its data dir and with it its credential.
	old.agents["m1"].kill()
	n.agentDirs["m1"] = old.agentDirs["m1"]
	n.agent("m1")
	rafttest.Eventually(t, 2*time.Minute, "the new cluster at the fixed point", func() error {
		st := n.status()
		return holds(st != nil && st.Converged && st.Machines["m1"] != nil && st.Machines["m1"].State == "started" && allSettled(st, 4), jsonString(st))
	})
	// A new machine registers with the join token the data dir holds:
	// the kept one, or the one restore made.
	n.agent("m2")
	n.waitMachines("m2")
	// The charm archives are not in the backup: the same environment
	// applied again uploads them, changing nothing else.
	hash := before.Services["db"].Charm
	if before.Charms[hash] == nil {
		t.Fatalf("db's charm %q is not in the state", hash)
	}
	if code := n.getStatusAt(n.addrs[2], "/v1/charms/"+hash); code == http.StatusOK {
		t.Fatal("the restored cluster serves db's charm before it was uploaded again")
	}
	if r := n.cli("apply", "-f", env, "--yes"); r.code != 0 || !strings.Contains(r.stdout, "environment unchanged") {
		t.Fatalf("apply of the same environment: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if code := n.getStatusAt(n.addrs[2], "/v1/charms/"+hash); code != http.StatusOK {
		t.Fatalf("GET db's charm after the same environment was applied again: %d", code)
	}
	// A service added now runs on m1: the agent works for the new
	// cluster, and the demo's units, whose universes did not change, run
	// nothing.
	if r := n.cli("apply", "-f", drEnv(t, envDir, true), "--yes", "--wait", "--timeout", "3m"); r.code != 0 {
		t.Fatalf("apply after the restore: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	after := n.state(n.addrs[1], false)
	if u := after.Units["extra/0"]; u == nil || u.Reconciles == 0 {
		t.Fatalf("the added unit did not run on the restored cluster: %s", jsonString(u))
	}
	for name, u := range before.Units {
		a := after.Units[name]
		if a == nil || a.Reconciles != u.Reconciles || a.Reconciled != u.Reconciled {
			t.Errorf("%s ran again after the restore: %d runs (universe %s), before %d (%s)", name, a.Reconciles, a.Reconciled, u.Reconciles, u.Reconciled)
		}
	}
	t.Logf("hook runs of the demo's units: %d before the loss, %d after the restore", totalRuns(before), totalRuns(after)-after.Units["extra/0"].Reconciles)

	// The secret opens with the kept key.
	r := n.cli("show-secret", model.UserSecretID("shop", "dr-pass"), "--reveal", "-o", "json")
	var info api.SecretInfo
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &info) != nil || info.Content["password"] != drSecret {
		t.Errorf("show-secret --reveal on the new cluster: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// copyPrivate copies a file to one only its owner may read.
func copyPrivate(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// totalRuns is the hook runs of every unit of st.
func totalRuns(st *model.State) int {
	n := 0
	for _, u := range st.Units {
		n += u.Reconciles
	}
	return n
}

// allSettled says whether the status holds n units, every one settled and
// its agent present.
func allSettled(st *engine.Status, n int) bool {
	if len(st.Units) != n {
		return false
	}
	for _, u := range st.Units {
		if u.Phase != engine.Settled || u.Agent != "" {
			return false
		}
	}
	return true
}
