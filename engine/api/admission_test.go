package api_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/model/fault"
)

// lastIndex is the last index of n's log once the term's barrier is in
// it: a node's first linearizable read of a term appends Raft's barrier
// entry, and a refusal is confirmed on such a read, so without this the
// first refusal of a term would seem to grow the log.
func lastIndex(t *testing.T, n *testNode) uint64 {
	t.Helper()
	if code, e, body := call(t, http.MethodGet, n.addr+"/v1/raft/readindex", operatorToken, nil); code != http.StatusOK {
		t.Fatalf("read index: %d %v %s", code, e, body)
	}
	code, e, body := call(t, http.MethodGet, n.addr+"/v1/raft/status", operatorToken, nil)
	var st struct {
		LastIndex uint64 `json:"last_index"`
	}
	if err := json.Unmarshal(body, &st); code != http.StatusOK || err != nil || st.LastIndex == 0 {
		t.Fatalf("raft status: %d %v %s", code, e, body)
	}
	return st.LastIndex
}

// uploadedDeploy uploads a charm to n and returns a deploy of units of it
// as service db.
func uploadedDeploy(t *testing.T, n *testNode) func(units int) *model.Deploy {
	t.Helper()
	archive := []byte("a charm archive for the admission tests")
	sum := sha256.Sum256(archive)
	hash := hex.EncodeToString(sum[:])
	if code, e, _ := call(t, http.MethodPut, n.addr+"/v1/charms/"+hash, operatorToken, archive); code/100 != 2 {
		t.Fatalf("upload: %d %v", code, e)
	}
	return func(units int) *model.Deploy {
		return &model.Deploy{
			Env: model.Environment{APIVersion: model.APIVersion, Name: "adm", Services: map[string]model.ServiceSpec{
				"db": {CharmHash: hash, Units: &units}}},
			Charms: map[string]*model.Charm{hash: {Hash: hash, Meta: model.CharmMeta{Name: "db"}}},
		}
	}
}

// TestLimitsRefusedBeforeTheLog: with the cluster's limits lowered by a
// replicated OpLimits entry, a deploy or a plan over them and a machine
// past them are refused with 409, naming the path and the flag that
// raises the limit, and the Raft log does not move; within them they are
// taken.
func TestLimitsRefusedBeforeTheLog(t *testing.T) {
	n := startNode(t, "n1")
	op := api.NewClient([]string{n.addr}, operatorToken, nil)
	l := model.DefaultLimits
	l.UnitsPerService, l.Machines = 3, 1
	if _, err := n.store.Apply(ctxT(t), &model.Command{Op: model.OpLimits, Limits: &l}); err != nil {
		t.Fatal(err)
	}
	deploy := uploadedDeploy(t, n)
	if _, err := op.Deploy(ctxT(t), deploy(3)); err != nil {
		t.Fatalf("a deploy within the limits: %v", err)
	}
	agent := api.NewClient([]string{n.addr}, joinToken, nil)
	if err := agent.Register(ctxT(t), "m1", "10.0.0.1"); err != nil {
		t.Fatalf("the first machine: %v", err)
	}
	before := lastIndex(t, n)
	for what, try := range map[string]func() error{
		"deploy": func() error { _, err := op.Deploy(ctxT(t), deploy(4)); return err },
		"plan":   func() error { _, err := op.Plan(ctxT(t), deploy(4)); return err },
	} {
		err := try()
		var ps model.Problems
		if !errors.Is(err, api.ErrRefused) || !errors.As(err, &ps) || len(ps) != 1 ||
			strings.Join(ps[0].Path, ".") != "services.db.units" || !strings.Contains(ps[0].Msg, "--max-units-per-service") {
			t.Errorf("%s of 4 units, the limit 3: %v; want 409 with a problem at services.db.units naming the flag", what, err)
		}
	}
	err := api.NewClient([]string{n.addr}, joinToken, nil).Register(ctxT(t), "m2", "10.0.0.2")
	if !errors.Is(err, api.ErrRefused) || !strings.Contains(err.Error(), "--max-machines") {
		t.Errorf("a second machine, the limit 1: %v; want 409 naming --max-machines", err)
	}
	if after := lastIndex(t, n); after != before {
		t.Fatalf("refused requests grew the Raft log from %d to %d", before, after)
	}
}

// TestNoOpsAndRefusalsDoNotGrowTheLog: commands the state a node reads
// already refuses (resolve a unit that is not in error or does not
// exist) or that would change nothing (the same join token again, a reset
// of a machine without credential) are answered without a log entry;
// the refusals say why.
func TestNoOpsAndRefusalsDoNotGrowTheLog(t *testing.T) {
	n := startNode(t, "n1")
	op := api.NewClient([]string{n.addr}, operatorToken, nil)
	deploy := uploadedDeploy(t, n)
	if _, err := op.Deploy(ctxT(t), deploy(2)); err != nil {
		t.Fatal(err)
	}
	if err := api.NewClient([]string{n.addr}, joinToken, nil).Register(ctxT(t), "m1", "10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	if _, err := op.ResetMachine(ctxT(t), "m1", false); err != nil {
		t.Fatal(err)
	}
	hash := api.HashToken("another join token")
	if _, err := op.SetJoinToken(ctxT(t), hash, time.Time{}); err != nil {
		t.Fatal(err)
	}
	before := lastIndex(t, n)
	for _, c := range []struct {
		what string
		err  error
		says string
	}{
		{"resolve a unit not in error", op.Resolved(ctxT(t), "db/0", false), "db/0 is not in error"},
		{"resolve a unit that does not exist", op.Resolved(ctxT(t), "db/7", false), "db/7 does not exist"},
	} {
		if !errors.Is(c.err, api.ErrRefused) || !strings.Contains(c.err.Error(), c.says) {
			t.Errorf("%s: %v; want refused saying %q", c.what, c.err, c.says)
		}
	}
	if _, err := op.SetJoinToken(ctxT(t), hash, time.Time{}); err != nil {
		t.Errorf("the join token set again: %v", err)
	}
	if _, err := op.ResetMachine(ctxT(t), "m1", false); err != nil {
		t.Errorf("a machine reset again: %v", err)
	}
	if after := lastIndex(t, n); after != before {
		t.Fatalf("refused and no-op requests grew the Raft log from %d to %d", before, after)
	}
	// A unit in error is resolved, once; marking it again changes
	// nothing and is not logged.
	if _, err := n.store.Apply(ctxT(t), &model.Command{Op: model.OpResults, Results: []model.Result{{Unit: "db/0", Hash: "x", Error: "boom"}}}); err != nil {
		t.Fatal(err)
	}
	if err := op.Resolved(ctxT(t), "db/0", false); err != nil {
		t.Fatalf("resolve a unit in error: %v", err)
	}
	before = lastIndex(t, n)
	if err := op.Resolved(ctxT(t), "db/0", false); err != nil {
		t.Errorf("resolve it again: %v", err)
	}
	if err := op.Resolved(ctxT(t), "db/0", true); !errors.Is(err, api.ErrRefused) || !strings.Contains(err.Error(), "already marked resolved") {
		t.Errorf("resolve it the other way: %v", err)
	}
	if after := lastIndex(t, n); after != before {
		t.Fatalf("resolving again grew the Raft log from %d to %d", before, after)
	}
	// A batch with nothing left to mark is a no-op too; one that marks
	// units is one entry, and names them.
	if resp, err := op.ResolveBatch(ctxT(t), "db", false); err != nil || len(resp.Resolved) != 0 || lastIndex(t, n) != before {
		t.Errorf("resolve db with db/0 marked already: %+v, %v; log from %d to %d", resp, err, before, lastIndex(t, n))
	}
	if _, err := op.ResolveBatch(ctxT(t), "nope", false); !errors.Is(err, api.ErrRefused) || !strings.Contains(err.Error(), "service nope does not exist") {
		t.Errorf("resolve a service that does not exist: %v", err)
	}
	if _, err := n.store.Apply(ctxT(t), &model.Command{Op: model.OpResults, Results: []model.Result{{Unit: "db/1", Hash: "y", Error: "boom"}}}); err != nil {
		t.Fatal(err)
	}
	before = lastIndex(t, n)
	resp, err := op.ResolveBatch(ctxT(t), "", true)
	if err != nil || strings.Join(resp.Resolved, " ") != "db/1" || lastIndex(t, n) != before+1 {
		t.Errorf("resolve all --no-retry: %+v, %v; log from %d to %d, want db/1 in one entry", resp, err, before, lastIndex(t, n))
	}
}

// TestAFollowerConfirmsARefusalWithTheLeader: a follower whose copy lags
// does not refuse what the log already allows: a unit put in error on
// the leader is resolved through the follower at once.
func TestAFollowerConfirmsARefusalWithTheLeader(t *testing.T) {
	leader, follower := cluster(t)
	op := api.NewClient([]string{follower.addr}, operatorToken, nil)
	uploadedDeploy(t, follower)
	if _, err := api.NewClient([]string{leader.addr}, operatorToken, nil).Deploy(ctxT(t), uploadedDeploy(t, leader)(3)); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		unit := fmt.Sprintf("db/%d", i)
		if _, err := leader.store.Apply(ctxT(t), &model.Command{Op: model.OpResults, Results: []model.Result{{Unit: unit, Hash: "x", Error: "boom"}}}); err != nil {
			t.Fatal(err)
		}
		if err := op.Resolved(ctxT(t), unit, false); err != nil {
			t.Errorf("resolve %s through the follower right after it failed on the leader: %v", unit, err)
		}
	}
}

// TestReusedRequestIDRefusedBeforeTheLog: a request id is bound to its
// command; sent again with another command it is refused with 409 and
// the log does not move, while the same command again is a duplicate.
func TestReusedRequestIDRefusedBeforeTheLog(t *testing.T) {
	n := startNode(t, "n1")
	deploy := uploadedDeploy(t, n)
	send := func(units int) (int, *fault.Error, []byte) {
		body, err := json.Marshal(deploy(units))
		if err != nil {
			t.Fatal(err)
		}
		return call(t, http.MethodPost, n.addr+"/v1/deploy", operatorToken, body, "X-Request-Id", "req-1")
	}
	if code, e, body := send(2); code != http.StatusOK {
		t.Fatalf("first deploy: %d %v %s", code, e, body)
	}
	if code, e, body := send(2); code != http.StatusOK || !bytes.Contains(body, []byte(`"duplicate": true`)) {
		t.Fatalf("the same deploy again: %d %v %s, want 200 duplicate", code, e, body)
	}
	before := lastIndex(t, n)
	if code, e, _ := send(3); code != http.StatusConflict || e == nil || !strings.Contains(e.Message, "reused for a different command") {
		t.Fatalf("the id with another deploy: %d %v, want 409 naming the reuse", code, e)
	}
	if after := lastIndex(t, n); after != before {
		t.Fatalf("the refused reuse grew the Raft log from %d to %d", before, after)
	}
}
