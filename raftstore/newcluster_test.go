package raftstore

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/keyring"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// TestNewClusterFromBackup: a cluster's backup, staged in a fresh data
// dir with the cluster key, starts a new cluster on new addresses. Its
// first node holds the backup's state at the backup's index, with itself
// as the only member; its secret opens; a new node joins it by snapshot;
// writes go on. Staging and starting refuse what would lose the secrets
// or split a cluster.
func TestNewClusterFromBackup(t *testing.T) {
	log := testLogger(t)
	ctx := ctxT(t, 2*time.Minute)
	old := newNode(t, log, "n1")
	old.start(true, nil)
	settled(t, old)
	const secretID = "cn0gqa6qs7s1bm0kfp8g"
	const value = "plaintext-dr-5b7e90"
	for _, c := range []*model.Command{deployCmd(), machineCmd("m1", "10.0.0.1"), machineCmd("m2", "10.0.0.2")} {
		if _, err := old.s.Apply(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if resp, err := old.s.Apply(ctx, secretResult(t, old.s, model.SecretOpAdd, secretID, value)); err != nil || len(resp.Skipped) > 0 {
		t.Fatalf("add a secret: %v %v", resp, err)
	}
	var backup bytes.Buffer
	if err := old.s.SaveBackup(ctx, &backup); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(backup.String(), value) {
		t.Fatal("the backup holds the secret's value in the clear")
	}
	want, wantIndex := stateBytes(t, old.s), old.s.Index()
	keys, err := os.ReadFile(filepath.Join(old.dir, KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	old.stop()

	b, err := ReadBackup(bytes.NewReader(backup.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReadBackup(strings.NewReader(`{"version":1,"index":3}`)); err == nil {
		t.Error("a backup without a state was read")
	}
	if err := StageRestore(old.dir, b, keys); err == nil || !strings.Contains(err.Error(), "already holds") {
		t.Errorf("staging into a data dir with Raft state: %v, want a refusal", err)
	}
	r1 := newNode(t, log, "r1")
	if err := StageRestore(r1.dir, b, nil); err == nil || !strings.Contains(err.Error(), KeyFile) {
		t.Errorf("staging a backup with secrets without the key: %v, want a refusal naming %s", err, KeyFile)
	}
	another, err := keyring.NewMemoryKeyring()
	if err != nil {
		t.Fatal(err)
	}
	if err := StageRestore(r1.dir, b, another.Export()); err == nil || !strings.Contains(err.Error(), secretID) {
		t.Errorf("staging with another cluster's key: %v, want a refusal naming the secret", err)
	}
	if err := StageRestore(r1.dir, b, keys); err != nil {
		t.Fatal(err)
	}
	// A staged data dir only bootstraps: joining with it would drop the
	// backup silently.
	_, err = Open(ctx, Config{NodeID: "r1", DataDir: r1.dir, RaftAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:1", Join: []string{"127.0.0.1:1"}, Logger: log})
	if err == nil || !strings.Contains(err.Error(), "--bootstrap") {
		t.Fatalf("opening a staged data dir to join: %v, want a refusal", err)
	}

	// A key lost between staging and the start is caught before the
	// cluster starts without it.
	lost := newNode(t, log, "lost")
	if err := StageRestore(lost.dir, b, keys); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(lost.dir, KeyFile)); err != nil {
		t.Fatal(err)
	}
	_, err = Open(ctx, Config{NodeID: "lost", DataDir: lost.dir, RaftAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:1", Bootstrap: true, Logger: log})
	if err == nil || !strings.Contains(err.Error(), "do not open") {
		t.Fatalf("starting a staged backup whose key is gone: %v, want a refusal", err)
	}
	seedFile, err := os.ReadFile(filepath.Join(lost.dir, SeedFile))
	if err != nil {
		t.Fatal(err)
	}

	r1.start(true, nil)
	if got := stateBytes(t, r1.s); got != want {
		t.Fatalf("the new cluster's state differs from the backup's:\n%s\nwant\n%s", got, want)
	}
	if r1.s.Index() != wantIndex {
		t.Errorf("the new cluster starts at index %d, want the backup's %d", r1.s.Index(), wantIndex)
	}
	if _, err := os.Stat(filepath.Join(r1.dir, SeedFile)); !os.IsNotExist(err) {
		t.Errorf("the staged backup is still there after the bootstrap: %v", err)
	}
	settled(t, r1)
	err = r1.s.View(func(st *model.State) error {
		s := st.Secrets[secretID]
		if s == nil || len(s.Revisions) != 1 {
			t.Fatalf("restored secret: %+v", s)
		}
		got, err := model.OpenContent(st.Sealer(), secretID, s.Revisions[0].Sealed)
		if err == nil && got["password"] != value {
			t.Errorf("restored secret opens to %v", got)
		}
		return err
	})
	if err != nil {
		t.Fatalf("the restored secret does not open: %v", err)
	}

	// The old member is gone; a new one joins through the first.
	r2 := newNode(t, log, "r2")
	r2.start(false, []string{r1.httpAddr})
	nodes := []*node{r1, r2}
	rafttest.Eventually(t, time.Minute, "two voters", func() error { return voters(nodes, 2) })
	l := waitLeader(t, nodes...)
	if _, err := others(nodes, l)[0].s.Apply(ctx, machineCmd("m3", "10.0.0.3")); err != nil {
		t.Fatal(err)
	}
	rafttest.Eventually(t, time.Minute, "the joiner caught up", func() error { return converged(t, nodes...) })
	if r2.s.fsm.restores.Load() == 0 {
		t.Error("the joiner caught up without the snapshot")
	}
	got := machines(r2.s)
	if got["m1"] != "10.0.0.1" || got["m2"] != "10.0.0.2" || got["m3"] != "10.0.0.3" {
		t.Errorf("the joiner has machines %v", got)
	}
	ms, err := r2.s.Members(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.ID != "r1" && m.ID != "r2" {
			t.Errorf("member %s of the lost cluster is in the new one", m.ID)
		}
	}

	// Restarted with --bootstrap, as a service would be, the first node
	// carries on from its own state, even with the staged backup back in
	// its data dir (a crash between planting it and removing it).
	r1.stop()
	if err := os.WriteFile(filepath.Join(r1.dir, SeedFile), seedFile, 0o600); err != nil {
		t.Fatal(err)
	}
	r1.httpAddr = ""
	r1.start(true, nil)
	if _, err := os.Stat(filepath.Join(r1.dir, SeedFile)); !os.IsNotExist(err) {
		t.Errorf("a staged backup beside the state is still there: %v", err)
	}
	rafttest.Eventually(t, time.Minute, "the restarted first node caught up", func() error { return converged(t, nodes...) })
	if _, err := r1.s.Apply(ctx, machineCmd("m4", "10.0.0.4")); err != nil {
		t.Fatal(err)
	}
}
