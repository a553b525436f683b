package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/model/fault"
	"github.com/fixpoint/fixpoint/raftstore/forward"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// call sends one raw request with token (none when "") and returns the
// status, the decoded error envelope of a non-2xx answer, and the body.
func call(t *testing.T, method, url, token string, body []byte, hdr ...string) (int, *fault.Error, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctxT(t), method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode/100 == 2 {
		return resp.StatusCode, nil, data
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: error answer of type %q, want the JSON envelope", method, url, ct)
	}
	return resp.StatusCode, fault.Decode(resp.StatusCode, data), data
}

// Who may do what: no token, an unknown one, the join token, a machine's
// credential and the operator's, each at the door of the same node.
func TestAuth(t *testing.T) {
	n := startNode(t, "n1")
	if code, _, _ := call(t, "GET", n.addr+"/healthz", "", nil); code != http.StatusOK {
		t.Errorf("/healthz without a token: %d", code)
	}
	for _, tok := range []string{"", "not-a-token"} {
		code, e, _ := call(t, "GET", n.addr+"/v1/state?stale", tok, nil)
		if code != http.StatusUnauthorized || !errors.Is(e, api.ErrUnauthorized) || !strings.Contains(e.Message, "Authorization: Bearer") {
			t.Errorf("token %q: %d %v, want 401 unauthorized saying how to pass a token", tok, code, e)
		}
	}
	code, e, _ := call(t, "GET", n.addr+"/v1/state?stale", joinToken, nil)
	if code != http.StatusForbidden || !errors.Is(e, api.ErrForbidden) {
		t.Errorf("join token reading the state: %d %v, want 403", code, e)
	}

	// The join token registers a machine and gets its credential back.
	agent := api.NewClient([]string{n.addr}, joinToken, nil)
	if err := agent.Register(ctxT(t), "m1", "10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	if _, err := agent.Heartbeat(ctxT(t), "m1", nil); err != nil {
		t.Errorf("m1's agent heartbeating for m1: %v", err)
	}
	// That credential covers its own machine only.
	_, err := agent.Heartbeat(ctxT(t), "m2", nil)
	if !errors.Is(err, api.ErrForbidden) || !strings.Contains(err.Error(), "m1") {
		t.Errorf("m1's agent heartbeating for m2: %v, want forbidden", err)
	}
	if err := agent.Register(ctxT(t), "m2", "10.0.0.2"); !errors.Is(err, api.ErrForbidden) {
		t.Errorf("m1's agent registering m2: %v, want forbidden", err)
	}
	if _, err := agent.State(ctxT(t), true); !errors.Is(err, api.ErrForbidden) {
		t.Errorf("m1's agent reading the state: %v, want forbidden", err)
	}
	op := api.NewClient([]string{n.addr}, operatorToken, nil)
	st, err := op.State(ctxT(t), false)
	if err != nil {
		t.Fatal(err)
	}
	if st.Machines["m1"] == nil || st.Machines["m1"].Address != "10.0.0.1" {
		t.Errorf("m1 not registered: %+v", st.Machines)
	}
	if strings.Contains(string(mustJSON(t, st)), joinToken) {
		t.Error("the state holds the join token itself")
	}
}

// A command the model refuses is a 409 refused with the model's problems,
// errors.Is api.ErrRefused at the client; a malformed request is a 400;
// neither changes the state.
func TestRefusal(t *testing.T) {
	n := startNode(t, "n1")
	op := api.NewClient([]string{n.addr}, operatorToken, nil)
	before := stateJSON(t, n)

	err := op.Resolved(ctxT(t), "web/0", false)
	if !errors.Is(err, api.ErrRefused) || !strings.Contains(err.Error(), "web/0 does not exist") {
		t.Errorf("resolving a unit that does not exist: %v, want refused", err)
	}
	_, err = op.Deploy(ctxT(t), &model.Deploy{Env: model.Environment{APIVersion: "fixpoint/v0", Name: "x"}})
	var ps model.Problems
	if !errors.Is(err, api.ErrRefused) || !errors.As(err, &ps) || len(ps) == 0 || ps[0].Path[0] != "apiVersion" {
		t.Errorf("deploying an unknown apiVersion: %v, want refused with a problem at apiVersion", err)
	}

	code, e, _ := call(t, "POST", n.addr+"/v1/resolved", operatorToken, []byte(`{"unit": "web/0", "colour": "red"}`))
	if code != http.StatusBadRequest || !errors.Is(e, api.ErrBadRequest) || !strings.Contains(e.Message, "colour") {
		t.Errorf("unknown field: %d %v, want 400 naming the field", code, e)
	}
	code, e, _ = call(t, "POST", n.addr+"/v1/resolved", operatorToken, []byte(`{"unit": `))
	if code != http.StatusBadRequest || e.Kind != fault.KindBadRequest {
		t.Errorf("truncated body: %d %v, want 400", code, e)
	}
	code, e, _ = call(t, "GET", n.addr+"/v1/state?index=soon", operatorToken, nil)
	if code != http.StatusBadRequest || !strings.Contains(e.Message, `index="soon"`) {
		t.Errorf("bad index: %d %v", code, e)
	}
	if after := stateJSON(t, n); after != before {
		t.Errorf("refused requests changed the state:\n%s\nto\n%s", before, after)
	}
}

// An agent claiming for a machine the control plane does not know hears
// not_registered: errors.Is api.ErrNotRegistered, a 404 on the wire.
func TestNotRegistered(t *testing.T) {
	n := startNode(t, "n1")
	op := api.NewClient([]string{n.addr}, operatorToken, nil)
	_, err := op.Claim(ctxT(t), "ghost", 1, time.Millisecond)
	if !errors.Is(err, api.ErrNotRegistered) {
		t.Fatalf("claim for an unknown machine: %v, want not registered", err)
	}
	var e *api.Error
	if !errors.As(err, &e) || e.Status != http.StatusNotFound || !strings.Contains(e.Message, "registers it on start") {
		t.Errorf("got %+v", e)
	}
}

// A follower passes leader-only requests to the leader and writes through
// raftstore's forwarding; a request another node already forwarded is
// refused with the leader's address instead of passed on again.
func TestForwardingToLeader(t *testing.T) {
	leader, follower := cluster(t)
	agent := api.NewClient([]string{follower.addr}, joinToken, nil)
	// Registration is leader-only: the follower proxies it.
	if err := agent.Register(ctxT(t), "m1", "10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	rafttest.Eventually(t, time.Minute, "the follower applies m1's credential", func() error {
		return follower.store.View(func(st *model.State) error {
			if st.Machines["m1"] == nil {
				return errors.New("m1 not there yet")
			}
			return nil
		})
	})
	// Writes ride to the leader in batches, each member authorized there
	// on its own: an agent's credential renews its own machine through
	// the follower and no other, and only the nodes' credential sends a
	// batch at all.
	code, e, body := call(t, "POST", follower.addr+"/v1/agent/register", joinToken, mustJSON(t, api.Register{Machine: "m2", Address: "10.0.0.2"}))
	var reg api.Registered
	if code != http.StatusOK || json.Unmarshal(body, &reg) != nil || reg.Token == "" {
		t.Fatalf("register m2 through the follower: %d %v %s", code, e, body)
	}
	rafttest.Eventually(t, time.Minute, "the follower applies m2's credential", func() error {
		return follower.store.View(func(st *model.State) error {
			if st.Machines["m2"] == nil {
				return errors.New("m2 not there yet")
			}
			return nil
		})
	})
	if code, e, _ := call(t, "POST", follower.addr+"/v1/agent/register", reg.Token, mustJSON(t, api.Register{Machine: "m2", Address: "10.0.0.3"})); code != http.StatusOK {
		t.Errorf("m2 renews through the follower: %d %v", code, e)
	}
	if code, e, _ := call(t, "POST", follower.addr+"/v1/agent/register", reg.Token, mustJSON(t, api.Register{Machine: "m1", Address: "10.0.0.3"})); code != http.StatusForbidden || !errors.Is(e, fault.ErrForbidden) {
		t.Errorf("m2's credential registers m1 through the follower: %d %v, want 403", code, e)
	}
	if code, e, _ := call(t, "POST", leader.addr+forward.BatchPath, reg.Token, nil); code != http.StatusForbidden {
		t.Errorf("an agent sends a batch: %d %v, want 403", code, e)
	}
	// A claim is answered by the leader's controller, through the
	// follower, and a refusal comes back typed across both hops.
	work, err := agent.Claim(ctxT(t), "m1", 4, 10*time.Millisecond)
	if err != nil || len(work) != 0 {
		t.Fatalf("claim through the follower: %v, %v", work, err)
	}
	op := api.NewClient([]string{follower.addr}, operatorToken, nil)
	if err := op.Resolved(ctxT(t), "web/0", false); !errors.Is(err, api.ErrRefused) {
		t.Errorf("a refused write through the follower: %v, want refused", err)
	}
	if _, err := op.Claim(ctxT(t), "ghost", 1, time.Millisecond); !errors.Is(err, api.ErrNotRegistered) {
		t.Errorf("claim for an unknown machine through the follower: %v, want not registered", err)
	}
	// The write went through the leader's log: the follower's copy has it.
	st, err := api.NewClient([]string{leader.addr}, operatorToken, nil).State(ctxT(t), false)
	if err != nil || st.Machines["m1"] == nil {
		t.Fatalf("the leader's state: %v, %v", st, err)
	}

	code, e, _ = call(t, "GET", follower.addr+"/v1/status", operatorToken, nil, forward.Header, "n3")
	if code != http.StatusServiceUnavailable || !errors.Is(e, api.ErrNotLeader) || e.Leader != leader.addr || e.Node != "n2" {
		t.Errorf("a forwarded request at a follower: %d %+v, want 503 not_leader naming the leader", code, e)
	}
	// ?stale reads the follower's own copy.
	if code, e, _ := call(t, "GET", follower.addr+"/v1/status?stale", operatorToken, nil); code != http.StatusOK {
		t.Errorf("stale status at the follower: %d %v", code, e)
	}
}

// Long polls: a read with ?index=N waits until the state moves past N, and
// ends with the index it saw when nothing moved within ?wait.
func TestWatch(t *testing.T) {
	n := startNode(t, "n1")
	op := api.NewClient([]string{n.addr}, operatorToken, nil)
	idx := n.store.Index()

	type answer struct {
		index uint64
		err   error
	}
	got := make(chan answer, 1)
	go func() {
		st, err := op.Status(ctxT(t), false, idx, time.Minute)
		if err != nil {
			got <- answer{err: err}
			return
		}
		got <- answer{index: st.Index}
	}()
	if _, err := n.store.Apply(ctxT(t), &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: "m1", Address: "10.0.0.1"}}); err != nil {
		t.Fatal(err)
	}
	a := <-got
	if a.err != nil || a.index <= idx {
		t.Fatalf("status long poll past %d: index %d, %v", idx, a.index, a.err)
	}

	// Nothing moves: the poll ends after its wait with the current index.
	now := n.store.Index()
	code, e, body := call(t, "GET", n.addr+"/v1/state?index="+strconv.FormatUint(now, 10)+"&wait=20ms", operatorToken, nil)
	if code != http.StatusOK {
		t.Fatalf("idle long poll: %d %v", code, e)
	}
	var st model.State
	if err := json.Unmarshal(body, &st); err != nil || st.Index < now {
		t.Errorf("idle long poll: index %d (%v), want at least %d", st.Index, err, now)
	}
	code, e, _ = call(t, "GET", n.addr+"/v1/state?index=1&wait=forever", operatorToken, nil)
	if code != http.StatusBadRequest || !strings.Contains(e.Message, "not a duration") {
		t.Errorf("bad wait: %d %v", code, e)
	}

	// A poll whose caller goes away ends without an answer to write.
	ctx, cancel := context.WithCancel(ctxT(t))
	done := make(chan error, 1)
	go func() {
		_, err := op.Status(ctx, false, n.store.Index(), time.Minute)
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled long poll: %v", err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// stateJSON is n's state but for its index: a refused command takes a
// log entry and changes nothing else.
func stateJSON(t *testing.T, n *testNode) string {
	t.Helper()
	var out []byte
	err := n.store.View(func(st *model.State) error {
		cp := *st
		cp.Index = 0
		out = mustJSON(t, &cp)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// An agent that registers through a follower uses its new credential there
// at once. The registration is committed when the leader answers, but the
// follower may not have applied it yet: before it calls a credential
// unknown, it catches up with the leader. A token nobody issued is still
// refused.
func TestFreshCredentialAtAFollower(t *testing.T) {
	_, follower := cluster(t)
	for i := 0; i < 5; i++ {
		m := fmt.Sprintf("m%d", i)
		agent := api.NewClient([]string{follower.addr}, joinToken, nil)
		if err := agent.Register(ctxT(t), m, "10.0.0.1"); err != nil {
			t.Fatalf("register %s through the follower: %v", m, err)
		}
		if _, err := agent.Heartbeat(ctxT(t), m, nil); err != nil {
			t.Fatalf("%s's first heartbeat through the follower, right after it registered: %v", m, err)
		}
	}
	code, e, _ := call(t, "GET", follower.addr+"/v1/state?stale", "not-a-token", nil)
	if code != http.StatusUnauthorized || !errors.Is(e, api.ErrUnauthorized) {
		t.Errorf("a token nobody issued, at the follower: %d %v, want 401", code, e)
	}
}
