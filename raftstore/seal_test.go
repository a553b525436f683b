package raftstore

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/keyring"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// secretResult is db/0's result that adds (or, set, revises) a secret
// owned by the unit, its content sealed by the node that proposes it.
func secretResult(t *testing.T, s *Store, op, id, value string) *model.Command {
	t.Helper()
	res := []model.Result{{Unit: "db/0", Hash: "h-" + op, Secrets: []model.SecretChange{{
		Op: op, ID: id, Owner: model.SecretOwnerUnit, Content: map[string]string{"password": value},
	}}}}
	if op != model.SecretOpAdd {
		res[0].Secrets[0].Owner = ""
	}
	var sl model.Sealer
	_ = s.View(func(st *model.State) error { sl = st.Sealer(); return nil })
	if err := model.SealResults(sl, res); err != nil {
		t.Fatal(err)
	}
	return &model.Command{Op: model.OpResults, Results: res}
}

// TestSecretsSealedAtRest puts secret values (a unit's secret's and a
// user secret's) through a three-node cluster, rotates the cluster key, and then reads every byte each node keeps (WAL, stable store,
// snapshots) and a backup: the values are nowhere, while every node,
// the joiners included, opens them with the cluster key it holds.
func TestSecretsSealedAtRest(t *testing.T) {
	log := testLogger(t)
	n1, n2, n3 := newNode(t, log, "n1"), newNode(t, log, "n2"), newNode(t, log, "n3")
	n1.start(true, nil)
	settled(t, n1)
	n2.start(false, []string{n1.httpAddr})
	n3.start(false, []string{n1.httpAddr})
	nodes := []*node{n1, n2, n3}
	l := waitLeader(t, nodes...)
	ctx := ctxT(t, time.Minute)
	for _, c := range []*model.Command{deployCmd(), machineCmd("m1", "10.0.0.1")} {
		if _, err := l.s.Apply(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	const id = "cn0gqa6qs7s1bm0kfp8g"
	values := []string{"plaintext-one-7c1d0f", "plaintext-two-9e4b2a"}
	if resp, err := l.s.Apply(ctx, secretResult(t, l.s, model.SecretOpAdd, id, values[0])); err != nil || len(resp.Skipped) > 0 {
		t.Fatalf("add: %v %v", resp, err)
	}
	if resp, err := l.s.Apply(ctx, secretResult(t, l.s, model.SecretOpSet, id, values[1])); err != nil || len(resp.Skipped) > 0 {
		t.Fatalf("set: %v %v", resp, err)
	}
	// A user secret, declared in the environment and granted to db: its
	// value is sealed by the node that takes the deploy.
	userCmd := deployCmd()
	userCmd.Deploy.Env.Secrets = map[string]model.UserSecretSpec{"db-pass": {Content: map[string]model.SecretSource{"password": {File: "db.pass"}}, Grant: []string{"db"}}}
	userValue := "plaintext-user-4d2e81"
	err := l.s.View(func(st *model.State) (err error) {
		userCmd.Deploy.SecretRevisions, err = model.ReviseUserSecrets(st, &userCmd.Deploy.Env, map[string]map[string]string{"db-pass": {"password": userValue}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.s.Apply(ctx, userCmd); err != nil {
		t.Fatalf("deploy of a user secret: %v", err)
	}
	userID := model.UserSecretID("test", "db-pass")
	atRest := append(values[:len(values):len(values)], userValue)
	rafttest.Eventually(t, time.Minute, "all nodes applied", func() error { return converged(t, nodes...) })

	// A rotation through a follower: every server keeps the new key and
	// the revisions are sealed under it.
	var follower *node
	for _, n := range nodes {
		if n != l {
			follower = n
		}
	}
	newKey, err := follower.s.RotateSecretsKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rafttest.Eventually(t, time.Minute, "all nodes applied the rotation", func() error { return converged(t, nodes...) })
	for _, n := range nodes {
		if n.s.keys.Current() != newKey {
			t.Errorf("%s: current key %s, want the rotated %s", n.id, n.s.keys.Current(), newKey)
		}
		_ = n.s.View(func(st *model.State) error {
			for _, r := range st.Secrets[id].Revisions {
				if !strings.HasPrefix(r.Sealed, keyring.Prefix+newKey+".") {
					t.Errorf("%s: revision %d is not sealed under the new key", n.id, r.Rev)
				}
			}
			return nil
		})
	}
	for _, n := range nodes {
		err := n.s.View(func(st *model.State) error {
			s := st.Secrets[id]
			if s == nil || s.Latest() != 2 {
				return fmt.Errorf("secret %+v", s)
			}
			for rev, want := range values {
				got, err := st.OpenRevision(s, rev+1)
				if err != nil || got["password"] != want {
					return fmt.Errorf("revision %d opens to %v, %v", rev+1, got, err)
				}
			}
			return nil
		})
		if err != nil {
			t.Errorf("%s: %v", n.id, err)
		}
		_ = n.s.View(func(st *model.State) error {
			s := st.Secrets[userID]
			if s == nil {
				t.Errorf("%s: no user secret", n.id)
				return nil
			}
			if got, err := st.OpenRevision(s, 1); err != nil || got["password"] != userValue {
				t.Errorf("%s: the user secret opens to %v, %v", n.id, got, err)
			}
			return nil
		})
		if err := n.s.Snapshot(ctx); err != nil {
			t.Fatalf("%s: snapshot: %v", n.id, err)
		}
	}
	var backup bytes.Buffer
	if err := l.s.SaveBackup(ctx, &backup); err != nil {
		t.Fatal(err)
	}

	// Every byte at rest: the values never; the secret's id, which is
	// not secret, in the log and the backup (the grep reads the right
	// files).
	keyFile := ""
	for _, n := range nodes {
		idSeen := false
		err := filepath.WalkDir(n.dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, v := range atRest {
				if bytes.Contains(b, []byte(v)) {
					t.Errorf("%s: %s holds secret value %s in plaintext", n.id, path, v)
				}
			}
			idSeen = idSeen || bytes.Contains(b, []byte(id))
			if d.Name() == KeyFile {
				info, _ := d.Info()
				if info.Mode().Perm() != 0o600 {
					t.Errorf("%s: %s is %v, want 0600", n.id, path, info.Mode().Perm())
				}
				if keyFile == "" {
					keyFile = string(b)
				} else if string(b) != keyFile {
					t.Errorf("%s holds another cluster key than n1", n.id)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !idSeen {
			t.Errorf("%s: the secret's id is in no file: the grep missed the log", n.id)
		}
	}
	if keyFile == "" {
		t.Error("no node holds " + KeyFile)
	}
	for _, v := range atRest {
		if bytes.Contains(backup.Bytes(), []byte(v)) {
			t.Errorf("the backup holds secret value %s in plaintext", v)
		}
	}
	if !strings.Contains(backup.String(), id) {
		t.Error("the backup holds no secret at all")
	}
}

// TestUnsealedContentRefused: a result carrying content its proposer did
// not seal never reaches the log.
func TestUnsealedContentRefused(t *testing.T) {
	n := newNode(t, testLogger(t), "n1")
	n.start(true, nil)
	settled(t, n)
	ctx := ctxT(t, 30*time.Second)
	cmd := &model.Command{Op: model.OpResults, Results: []model.Result{{Unit: "db/0", Hash: "h", Secrets: []model.SecretChange{{
		Op: model.SecretOpAdd, ID: "cn0gqa6qs7s1bm0kfp8g", Owner: model.SecretOwnerUnit, Content: map[string]string{"password": "unsealed-value"},
	}}}}}
	before := n.s.Index()
	if _, err := n.s.Apply(ctx, cmd); err == nil || !strings.Contains(err.Error(), "not sealed") || strings.Contains(err.Error(), "unsealed-value") {
		t.Fatalf("apply of unsealed content: %v", err)
	}
	if n.s.Index() != before {
		t.Errorf("the refused command moved the index from %d to %d", before, n.s.Index())
	}
}
