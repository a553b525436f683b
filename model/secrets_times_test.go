package model

import (
	"testing"

	"github.com/fixpoint/fixpoint/raftstore/keyring"
)

// TestSecretTimesAreTheProposersWhenAsked: a deploy that asks for secret
// times records its Time as the user secret's and its revision's
// created time, and a later revision moves updated only; without the
// field (a cluster below LevelRecorded) nothing is recorded, so a build
// that knows no times holds the same state.
func TestSecretTimesAreTheProposersWhenAsked(t *testing.T) {
	kr, err := keyring.NewMemoryKeyring()
	if err != nil {
		t.Fatal(err)
	}
	id := UserSecretID("shop", "db-pass")
	values := map[string]map[string]string{"db-pass": {"password": "pw-one-xyzzy", "username": "admin"}}

	plain := NewState()
	plain.SetSealer(kr)
	apply(t, plain, 1, deploySecrets(t, plain, secretEnv(), values))
	if s := plain.Secrets[id]; s.CreatedAt != 0 || s.UpdatedAt != 0 || s.Revisions[0].CreatedAt != 0 {
		t.Fatalf("a deploy without secret_times recorded times: %+v", s)
	}

	s := NewState()
	s.SetSealer(kr)
	cmd := deploySecrets(t, s, secretEnv(), values)
	if !cmd.ChangesSecrets() {
		t.Fatal("a deploy declaring user secrets does not say it changes secrets")
	}
	cmd.Time, cmd.SecretTimes = 1000, true
	if lvl, _ := cmd.Level(); lvl != LevelRecorded {
		t.Fatalf("a deploy with secret_times needs level %d, want %d", lvl, LevelRecorded)
	}
	apply(t, s, 1, cmd)
	sec := s.Secrets[id]
	if sec.CreatedAt != 1000 || sec.UpdatedAt != 1000 || sec.Revisions[0].CreatedAt != 1000 {
		t.Fatalf("made at 1000: %+v", sec)
	}
	values["db-pass"]["password"] = "pw-two-xyzzy"
	cmd = deploySecrets(t, s, secretEnv(), values)
	cmd.Time, cmd.SecretTimes = 2000, true
	apply(t, s, 2, cmd)
	sec = s.Secrets[id]
	if sec.CreatedAt != 1000 || sec.UpdatedAt != 2000 || sec.Revision(2) == nil || sec.Revision(2).CreatedAt != 2000 {
		t.Fatalf("revised at 2000: %+v", sec)
	}

	// The field needs the command's time, and a command that makes secrets.
	for _, c := range []*Command{
		{Op: OpDeploy, SecretTimes: true, Deploy: &Deploy{Env: *secretEnv(), Charms: secretCharms()}},
		{Op: OpResolve, Time: 1, SecretTimes: true, Resolve: &ResolveUnit{Unit: "web/0"}},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("%s with secret_times and time %d was accepted", c.Op, c.Time)
		}
	}
}

// TestSecretTimesOfAnOwnersChanges: a unit's secret-add and secret-set
// (here an action's, through the result a hook's would carry) record the
// command's time when it asks, and the revision each made.
func TestSecretTimesOfAnOwnersChanges(t *testing.T) {
	s := actionState(t)
	const sid = "cn0gqa6qs7s1bm0kfp8g"
	finish := func(idx uint64, at int64, c SecretChange) {
		t.Helper()
		id := enqueue(t, s, idx, "db/0", "noop", nil)
		apply(t, s, idx+1, &Command{Op: OpStart, Time: at, StartAction: &StartAction{ID: id, Machine: "m1"}})
		cmd := &Command{Op: OpFinish, Time: at, SecretTimes: true, Finish: &FinishAction{ID: id, Machine: "m1", Writes: &Result{Unit: "db/0", Secrets: []SecretChange{c}}}}
		if !cmd.ChangesSecrets() {
			t.Fatal("a finish with secret changes does not say it changes secrets")
		}
		if resp := apply(t, s, idx+2, cmd); len(resp.Skipped) != 0 {
			t.Fatalf("skipped %v", resp.Skipped)
		}
	}
	finish(3, 5000, SecretChange{Op: SecretOpAdd, ID: sid, Owner: SecretOwnerUnit, Sealed: "opaque"})
	finish(6, 9000, SecretChange{Op: SecretOpSet, ID: sid, Sealed: "opaque2"})
	sec := s.Secrets[sid]
	if sec.CreatedAt != 5000 || sec.UpdatedAt != 9000 || sec.Revision(1).CreatedAt != 5000 || sec.Revision(2).CreatedAt != 9000 {
		t.Fatalf("secret %+v", sec)
	}
}
