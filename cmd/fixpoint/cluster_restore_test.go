package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore"
	"github.com/fixpoint/fixpoint/raftstore/keyring"
)

// writeBackup writes a backup document of st at index 7 into dir.
func writeBackup(t *testing.T, dir string, st *model.State) string {
	t.Helper()
	data, err := json.Marshal(map[string]any{"version": 1, "index": 7, "nodes": map[string]any{}, "state": st})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "backup.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestClusterRestoreRefuses: what `cluster restore --new-cluster` refuses
// changes nothing and says how to fix it; what it accepts leaves the data
// dir as a bootstrap node's, with the tokens it was given or new ones.
func TestClusterRestoreRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	op, join := api.NewToken(), api.NewToken()
	opFile := installPrivate(t, filepath.Join(dir, "operator.token"), op)
	joinFile := installPrivate(t, filepath.Join(dir, "join.token"), join)
	wrongFile := installPrivate(t, filepath.Join(dir, "wrong.token"), api.NewToken())
	kr, err := keyring.NewMemoryKeyring()
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "secrets.key")
	if err := os.WriteFile(keyFile, kr.Export(), 0o600); err != nil {
		t.Fatal(err)
	}
	st := model.NewState()
	st.Auth = &model.Auth{Operator: api.HashToken(op), Join: api.HashToken(join)}
	sealed, err := model.SealContent(kr, "cn0gqa6qs7s1bm0kfp8g", map[string]string{"password": "x"})
	if err != nil {
		t.Fatal(err)
	}
	st.Secrets = map[string]*model.Secret{"cn0gqa6qs7s1bm0kfp8g": {ID: "cn0gqa6qs7s1bm0kfp8g", OwnerKind: model.SecretOwnerUser, Revisions: []model.SecretRevision{{Rev: 1, Sealed: sealed}}}}
	backup := writeBackup(t, dir, st)
	notBackup := filepath.Join(dir, "not.json")
	if err := os.WriteFile(notBackup, []byte(`{"version":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "open.key")
	if err := os.WriteFile(open, kr.Export(), 0o644); err != nil {
		t.Fatal(err)
	}
	used := t.TempDir()
	if err := os.MkdirAll(filepath.Join(used, "raft"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(used, "raft", "raft.db"), nil, 0o600); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no --new-cluster", []string{backup, "--data-dir", t.TempDir()}, "cluster snapshot restore"},
		{"no data dir", []string{backup, "--new-cluster"}, "--data-dir"},
		{"not a backup", []string{notBackup, "--new-cluster", "--data-dir", t.TempDir(), "--token-file", opFile, "--secrets-key", keyFile}, "not a fixpoint backup"},
		{"no operator token", []string{backup, "--new-cluster", "--data-dir", t.TempDir(), "--secrets-key", keyFile}, "--new-tokens"},
		{"another operator token", []string{backup, "--new-cluster", "--data-dir", t.TempDir(), "--token-file", wrongFile, "--secrets-key", keyFile}, "not the one"},
		{"another join token", []string{backup, "--new-cluster", "--data-dir", t.TempDir(), "--token-file", opFile, "--join-token-file", wrongFile, "--secrets-key", keyFile}, "rotated or revoked"},
		{"no key", []string{backup, "--new-cluster", "--data-dir", t.TempDir(), "--token-file", opFile}, "secrets.key"},
		{"a key others read", []string{backup, "--new-cluster", "--data-dir", t.TempDir(), "--token-file", opFile, "--secrets-key", open}, "chmod 600"},
		{"a used data dir", []string{backup, "--new-cluster", "--data-dir", used, "--token-file", opFile, "--secrets-key", keyFile}, "already holds"},
		{"new tokens and a token", []string{backup, "--new-cluster", "--data-dir", t.TempDir(), "--new-tokens", "--token-file", opFile}, "--new-tokens makes both"},
	} {
		r := runFixpoint(t, time.Minute, "", []string{"FIXPOINT_TOKEN="}, append([]string{"cluster", "restore"}, c.args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: exit %d, want a refusal saying %q:\n%s%s", c.name, r.code, c.want, r.stdout, r.stderr)
		}
		if strings.Contains(r.stdout+r.stderr, op) || strings.Contains(r.stdout+r.stderr, join) {
			t.Errorf("%s: a token is in the output", c.name)
		}
	}
	if _, err := os.Stat(filepath.Join(used, "raft", raftstore.SeedFile)); err == nil {
		t.Error("a refused restore staged the backup")
	}

	// Kept tokens: both files hold them, nothing is printed.
	kept := t.TempDir()
	r := fixpoint(t, time.Minute, "cluster", "restore", backup, "--new-cluster", "--data-dir", kept, "--token-file", opFile, "--join-token-file", joinFile, "--secrets-key", keyFile)
	if r.code != 0 || strings.Contains(r.stdout, "token:") {
		t.Fatalf("restore keeping the tokens: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if readFile(t, filepath.Join(kept, operatorTokenFile)) != op || readFile(t, filepath.Join(kept, joinTokenFile)) != join {
		t.Error("the data dir does not hold the tokens given")
	}
	for _, f := range []string{operatorTokenFile, joinTokenFile, filepath.Join("raft", raftstore.KeyFile), filepath.Join("raft", raftstore.SeedFile)} {
		if fi, err := os.Stat(filepath.Join(kept, f)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want mode 0600", f, fi, err)
		}
	}

	// New tokens: printed once, and the staged state holds their hashes.
	fresh := t.TempDir()
	r = fixpoint(t, time.Minute, "cluster", "restore", backup, "--new-cluster", "--data-dir", fresh, "--new-tokens", "--secrets-key", keyFile)
	if r.code != 0 {
		t.Fatalf("restore with new tokens: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	newOp, newJoin := readFile(t, filepath.Join(fresh, operatorTokenFile)), readFile(t, filepath.Join(fresh, joinTokenFile))
	if newOp == op || newJoin == join || !strings.Contains(r.stdout, "operator token: "+newOp) || !strings.Contains(r.stdout, newJoin) {
		t.Fatalf("new tokens: %s", r.stdout)
	}
	f, err := os.Open(filepath.Join(fresh, "raft", raftstore.SeedFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	staged, err := raftstore.ReadBackup(f)
	if err != nil {
		t.Fatal(err)
	}
	if a := staged.State().Auth; a == nil || a.Operator != api.HashToken(newOp) || a.Join != api.HashToken(newJoin) {
		t.Errorf("the staged state's credentials are %+v, want the new tokens' hashes", a)
	}
}
