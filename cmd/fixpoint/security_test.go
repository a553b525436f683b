package main

import (
	"bytes"
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
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// call makes one raw API request and returns the status and body.
func call(t *testing.T, method, url, token string, body any) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

func TestAgentsSeeAndChangeOnlyTheirOwnUnits(t *testing.T) {
	t.Parallel()
	sec := startSecured(t)
	up, base, join, operator := sec.up, sec.base, sec.join, sec.operator
	register := func(machine string) string {
		code, body := call(t, "POST", base+"/v1/agent/register", join, map[string]string{"machine": machine, "address": "127.0.0.1"})
		if code != 200 {
			t.Fatalf("register %s: %d %s", machine, code, body)
		}
		var reg struct{ Token string }
		_ = json.Unmarshal([]byte(body), &reg)
		return reg.Token
	}
	m1 := register("m1")
	register("m2")
	index := func() string {
		code, body := call(t, "GET", base+"/v1/state", operator, nil)
		if code != 200 {
			t.Fatalf("state: %d %s", code, body)
		}
		// Not the index: debug-log lines are entries too.
		var st struct {
			EnvIndex uint64 `json:"env_index"`
			Units    map[string]struct {
				Reconciled string `json:"reconciled"`
				Resolved   any    `json:"resolved"`
			} `json:"units"`
		}
		_ = json.Unmarshal([]byte(body), &st)
		b, _ := json.Marshal(st)
		return string(b)
	}
	before := index()

	refused := []struct {
		what, method, path, token string
		body                      any
		code                      int
		says                      string
	}{
		{"read machine m2's work", "GET", "/v1/agent/work?machine=m2&wait=1ms", m1, nil, 403, "covers only the units on machine m1"},
		{"post m2's results", "POST", "/v1/agent/results?machine=m2", m1, []map[string]string{{"unit": "db/1", "hash": "x"}}, 403, "covers only the units on machine m1"},
		{"read a universe directly", "GET", "/v1/universe/db/1", m1, nil, 403, "agent of machine m1 may not"},
		{"change the environment", "POST", "/v1/deploy", m1, map[string]any{}, 403, "may not POST /v1/deploy"},
		{"submit user secret values", "POST", "/v1/plan", m1, map[string]any{"secret_values": map[string]any{"db-pass": map[string]string{"password": "x"}}}, 403, "may not POST /v1/plan"},
		{"submit user secret values with the join token", "POST", "/v1/deploy", join, map[string]any{"secret_values": map[string]any{"db-pass": map[string]string{"password": "x"}}}, 403, "a join token only registers machines"},
		{"mark a unit resolved", "POST", "/v1/resolved", m1, map[string]any{"unit": "db/0"}, 403, "may not POST /v1/resolved"},
		{"register another machine", "POST", "/v1/agent/register", m1, map[string]string{"machine": "m2", "address": "10.9.9.9"}, 403, "covers only its own machine"},
		{"use the join token for more than joining", "GET", "/v1/status", join, nil, 403, "a join token only registers machines"},
		{"read the state with no token", "GET", "/v1/state", "", nil, 401, "missing or unknown token"},
		{"read the state with a wrong token", "GET", "/v1/state", "not-a-token", nil, 401, "missing or unknown token"},
		{"change the environment with no token", "POST", "/v1/deploy", "", map[string]any{}, 401, "missing or unknown token"},
		{"drive raft with an agent token", "POST", "/v1/raft/snapshot", m1, map[string]any{}, 403, "may not"},
		{"queue an action or exec", "POST", "/v1/actions", m1, map[string]any{"unit": "db/0", "exec": "id"}, 403, "may not POST /v1/actions"},
		{"read the operations", "GET", "/v1/actions", m1, nil, 403, "may not GET /v1/actions"},
		{"start m2's operation", "POST", "/v1/agent/actions/start?machine=m2", m1, map[string]any{"id": 1}, 403, "covers only the units on machine m1"},
		{"report m2's operation", "POST", "/v1/agent/actions/finish?machine=m2", m1, map[string]any{"id": 1, "unit": "db/1"}, 403, "covers only the units on machine m1"},
		{"queue an action with the join token", "POST", "/v1/actions", join, map[string]any{"unit": "db/0", "action": "x"}, 403, "a join token only registers machines"},
	}
	for _, r := range refused {
		code, body := call(t, r.method, base+r.path, r.token, r.body)
		if code != r.code || !strings.Contains(body, r.says) {
			t.Errorf("%s: got %d %s, want %d saying %q", r.what, code, strings.TrimSpace(body), r.code, r.says)
		}
		if strings.Contains(body, m1) || strings.Contains(body, join) {
			t.Errorf("%s: the answer leaks a token: %s", r.what, body)
		}
	}
	// Results for another machine's unit smuggled into m1's own batch are
	// not applied either.
	code, body := call(t, "POST", base+"/v1/agent/results?machine=m1", m1, []map[string]any{{"unit": "db/1", "hash": "x", "output": "e30="}})
	if code != 200 || !strings.Contains(body, "db/1") {
		t.Errorf("smuggled result: %d %s", code, body)
	}
	if after := index(); after != before {
		t.Fatalf("refused requests changed the state:\nbefore %s\nafter  %s", before, after)
	}
	if out := up.out.String(); strings.Contains(out, m1) || strings.Contains(out, join) || strings.Contains(out, operator) {
		t.Fatal("a token appears in the control plane's output")
	}
	// What is allowed still works: m1 claims its own work.
	if code, body := call(t, "GET", base+"/v1/agent/work?machine=m1&wait=1ms", m1, nil); code != 200 {
		t.Fatalf("m1 claiming its own work: %d %s", code, body)
	}
}

// callRaw sends body bytes as they are, with extra headers.
func callRaw(t *testing.T, method, url, token string, body []byte, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(out)
}

// secured is a running `up` with its address and tokens, for attacks.
type secured struct {
	up             *proc
	data, base     string
	join, operator string
}

func startSecured(t *testing.T) *secured {
	t.Helper()
	s := &secured{data: t.TempDir()}
	// No agent for m1/m2 runs: a long TTL keeps their machines from going
	// lost (a state change) during the test.
	s.up = startProc(t, "up", "-f", repo("testdata", "envs", "leader.cue"), "--data-dir", s.data, "--agent-ttl", "1h")
	// Up writes its environment and registers its own machine after it
	// starts serving; tests that count Raft entries start after both.
	rafttest.Eventually(t, 2*time.Minute, "up serving, its environment applied and its machine registered", func() error {
		st := statusOf(t, s.data)
		return holds(st != nil && !st.Applying && st.Machines["local"] != nil, s.up.out.String())
	})
	s.base = readEndpoint(t, s.data)
	s.join = readFile(t, filepath.Join(s.data, joinTokenFile))
	s.operator = readFile(t, filepath.Join(s.data, operatorTokenFile))
	return s
}

func (s *secured) register(t *testing.T, token, machine string) (int, string, string) {
	t.Helper()
	code, body := call(t, "POST", s.base+"/v1/agent/register", token, map[string]string{"machine": machine, "address": "127.0.0.1"})
	var reg struct{ Token string }
	_ = json.Unmarshal([]byte(body), &reg)
	return code, body, reg.Token
}

// stateBut is the replicated state as JSON with its index left out: what
// a refused request must not change.
func (s *secured) stateBut(t *testing.T) string {
	t.Helper()
	code, body := call(t, "GET", s.base+"/v1/state", s.operator, nil)
	var st map[string]any
	if err := json.Unmarshal([]byte(body), &st); code != 200 || err != nil {
		t.Fatalf("state: %d %.300s", code, body)
	}
	delete(st, "index")
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Attack 1: a leaked join token must not take a registered machine over.
func TestJoinTokenCannotTakeAMachineOver(t *testing.T) {
	t.Parallel()
	s := startSecured(t)
	code, body, m1 := s.register(t, s.join, "m1")
	if code != 200 || m1 == "" {
		t.Fatalf("first registration: %d %s", code, body)
	}
	// The attacker holds the join token and registers m1 again.
	code, body, stolen := s.register(t, s.join, "m1")
	if code != http.StatusConflict || stolen != "" || !strings.Contains(body, "fixpoint machine reset m1") {
		t.Fatalf("takeover with the join token: got %d %s, want 409 naming `fixpoint machine reset m1`", code, body)
	}
	rafttest.Eventually(t, time.Minute, "the refused takeover logged with machine and remote address", func() error {
		out := s.up.out.String()
		return holds(strings.Contains(out, "refused machine takeover") && strings.Contains(out, "machine=m1") && strings.Contains(out, "remote=127.0.0.1:"), out)
	})
	// The real agent renews with its own credential and keeps it.
	if code, body, again := s.register(t, m1, "m1"); code != 200 || again != m1 {
		t.Fatalf("renewal with m1's credential: %d %s", code, body)
	}
	if code, body := call(t, "GET", s.base+"/v1/agent/work?machine=m1&wait=1ms", m1, nil); code != 200 {
		t.Fatalf("m1 claiming its work after the refused takeover: %d %s", code, body)
	}
	// The operator resets m1: the old credential is refused, the join
	// token registers it once more, and status shows the change.
	if code, body := call(t, "POST", s.base+"/v1/machines/m1/reset", s.operator, map[string]any{}); code != 200 {
		t.Fatalf("reset m1: %d %s", code, body)
	}
	if code, body := call(t, "GET", s.base+"/v1/agent/work?machine=m1&wait=1ms", m1, nil); code != http.StatusUnauthorized {
		t.Fatalf("the reset credential still works: %d %s", code, body)
	}
	code, body, fresh := s.register(t, s.join, "m1")
	if code != 200 || fresh == "" || fresh == m1 {
		t.Fatalf("registration after reset: %d %s", code, body)
	}
	st := statusOf(t, s.data)
	if st == nil || st.Machines["m1"] == nil || st.Machines["m1"].CredentialReplaced == 0 {
		t.Fatalf("status does not show m1's replaced credential: %s", jsonString(st))
	}
	r := fixpoint(t, time.Minute, "status", "--data-dir", s.data)
	if !strings.Contains(r.stdout, "machine m1: its agent credential was reset") {
		t.Fatalf("status table does not name m1's reset credential:\n%s", r.stdout)
	}
	// Rotating the join token refuses the old one; an expired one is
	// refused too.
	r = fixpoint(t, time.Minute, "token", "rotate", "join", "--data-dir", s.data)
	newJoin := strings.TrimSpace(r.stdout)
	if r.code != 0 || newJoin == "" || newJoin == s.join {
		t.Fatalf("token rotate join: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if got := readFile(t, filepath.Join(s.data, joinTokenFile)); got != newJoin {
		t.Fatalf("the node's join.token was not replaced")
	}
	if code, body, _ := s.register(t, s.join, "m3"); code != http.StatusUnauthorized {
		t.Fatalf("the rotated-out join token still registers: %d %s", code, body)
	}
	if code, body, _ := s.register(t, newJoin, "m3"); code != 200 {
		t.Fatalf("the new join token: %d %s", code, body)
	}
	hash := api.HashToken("expired-join-token")
	if code, body := call(t, "POST", s.base+"/v1/token/join", s.operator, map[string]any{"hash": hash, "expires": time.Now().Add(-time.Minute)}); code != 200 {
		t.Fatalf("set an expired join token: %d %s", code, body)
	}
	if code, body, _ := s.register(t, "expired-join-token", "m4"); code != http.StatusUnauthorized || !strings.Contains(body, "expired") {
		t.Fatalf("an expired join token: %d %s", code, body)
	}
	// Forget removes the machine altogether.
	if r := fixpoint(t, time.Minute, "machine", "forget", "m3", "--data-dir", s.data); r.code != 0 {
		t.Fatalf("machine forget m3: %d %s", r.code, r.stderr)
	}
	if st := statusOf(t, s.data); st == nil || st.Machines["m3"] != nil {
		t.Fatalf("m3 still registered after forget: %s", jsonString(st))
	}
}

// Attack 1, the agent's side: it keeps its credential 0600 in its data dir
// and a restart renews the machine with it.
func TestAgentKeepsItsCredentialPrivate(t *testing.T) {
	t.Parallel()
	s := startSecured(t)
	dir := t.TempDir()
	agentArgs := []string{"agent", "--controller", s.base, "--machine", "m1", "--data-dir", dir, "--address", "127.0.0.1", "--token", s.join}
	a := startProc(t, agentArgs...)
	path := filepath.Join(dir, model.AgentCredentialFile)
	rafttest.Eventually(t, time.Minute, "the agent keeps its credential", func() error {
		fi, err := os.Stat(path)
		return holds(err == nil && fi.Size() > 0, a.out.String())
	})
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s has mode %v, want 0600", path, fi.Mode().Perm())
	}
	cred := readFile(t, path)
	a.kill()
	a = startProc(t, agentArgs...)
	rafttest.Eventually(t, time.Minute, "the restarted agent works with its kept credential", func() error {
		code, _ := call(t, "GET", s.base+"/v1/agent/work?machine=m1&wait=1ms", cred, nil)
		return holds(code == 200 && strings.Contains(a.out.String(), "agent registered"), a.out.String())
	})
	if got := readFile(t, path); got != cred {
		t.Fatal("a restart replaced the machine's credential")
	}
	// An agent that lost its credential is told what to do.
	other := startProc(t, "agent", "--controller", s.base, "--machine", "m1", "--data-dir", t.TempDir(), "--address", "127.0.0.1", "--token", s.join)
	rafttest.Eventually(t, time.Minute, "the agent without its credential names the fix", func() error {
		return holds(strings.Contains(other.out.String(), "fixpoint machine reset m1"), other.out.String())
	})
}

// Attack 3: oversized and malformed input is refused before it is
// proposed, quickly, and changes nothing. The Raft log may still grow by
// the node's own warnings about the refusals (debug-log batches, one at
// a time), so what is compared is the state without its index.
func TestOversizedAndMalformedInputNeverReachesTheLog(t *testing.T) {
	s := startSecured(t)
	before := s.stateBut(t)
	huge := strings.Repeat("a", 2<<20)
	long := strings.Repeat("a", 1<<20)
	refused := []struct {
		what, method, path, token string
		body                      []byte
		code                      int
		says                      string
	}{
		{"a 2 MiB register body", "POST", "/v1/agent/register", s.join, []byte(`{"machine":"` + huge + `","address":"x"}`), 413, "limit"},
		{"a 1 MiB machine name", "POST", "/v1/agent/register", s.join, []byte(`{"machine":"` + long + `","address":"x"}`), 400, "the limit is 63"},
		{"a machine name with capitals", "POST", "/v1/agent/register", s.join, []byte(`{"machine":"M1","address":"x"}`), 400, "machine name"},
		{"an address with a newline", "POST", "/v1/agent/register", s.join, []byte(`{"machine":"m9","address":"1.2.3.4\nforged"}`), 400, "address"},
		{"a unit name with a path", "POST", "/v1/resolved", s.operator, []byte(`{"unit":"../../etc/0"}`), 400, "unit"},
		{"a service name with an escape", "POST", "/v1/deploy", s.operator, []byte(`{"env":{"apiVersion":"fixpoint/v1","services":{"x\u001b[31m":{"charm":"c"}}},"charms":{}}`), 409, "service name"},
		{"a 2 MiB deploy", "POST", "/v1/deploy", s.operator, []byte(`{"env":{"apiVersion":"fixpoint/v1","name":"` + huge + `"},"charms":{}}`), 413, "limit"},
		{"a 2 MiB heartbeat", "POST", "/v1/agent/heartbeat?machine=m1", s.operator, []byte(`{"running":["` + huge + `"]}`), 413, "limit"},
	}
	for _, r := range refused {
		start := time.Now()
		code, body := callRaw(t, r.method, s.base+r.path, r.token, r.body, nil)
		if code != r.code || !strings.Contains(body, r.says) {
			t.Errorf("%s: got %d %.300s, want %d saying %q", r.what, code, body, r.code, r.says)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("%s: took %s to refuse", r.what, d)
		}
	}
	if after := s.stateBut(t); after != before {
		t.Fatalf("refused requests changed the state:\nbefore %s\nafter  %s", before, after)
	}
}

// Attack 7: a request id is bound to its command: reused with another
// command it is refused, not answered "duplicate".
func TestRequestIDBoundToCommand(t *testing.T) {
	t.Parallel()
	s := startSecured(t)
	deploy := func(name string) (int, string) {
		body := []byte(`{"env":{"apiVersion":"fixpoint/v1","name":"` + name + `","services":{}},"charms":{}}`)
		return callRaw(t, "POST", s.base+"/v1/deploy", s.operator, body, map[string]string{"X-Request-Id": "req-1"})
	}
	if code, body := deploy("first"); code != 200 {
		t.Fatalf("first deploy: %d %s", code, body)
	}
	if code, body := deploy("first"); code != 200 || !strings.Contains(body, `"duplicate": true`) {
		t.Fatalf("the same command retried: %d %s, want 200 duplicate", code, body)
	}
	before := s.deployed(t)
	if code, body := deploy("second"); code != http.StatusConflict || !strings.Contains(body, "reused for a different command") {
		t.Fatalf("the id reused for another command: %d %s, want 409", code, body)
	}
	// The node's warning about the refusal may reach the log as a
	// debug-log batch, so what is compared is what the id and the deploy
	// left in the state; engine/api's admission tests check that such a
	// refusal is never proposed.
	if after := s.deployed(t); after != before {
		t.Fatalf("the refused reuse changed the deployed environment or the id's binding: %+v, was %+v", after, before)
	}
}

// deployment is what a deploy leaves in the state: the environment's
// name and index, and where request id req-1 was applied.
type deployment struct {
	Name     string
	EnvIndex uint64
	Request  uint64
}

func (s *secured) deployed(t *testing.T) deployment {
	t.Helper()
	code, body := call(t, "GET", s.base+"/v1/state", s.operator, nil)
	var st struct {
		Name     string            `json:"name"`
		EnvIndex uint64            `json:"env_index"`
		Requests map[string]uint64 `json:"requests"`
	}
	if err := json.Unmarshal([]byte(body), &st); code != 200 || err != nil {
		t.Fatalf("state: %d %.300s", code, body)
	}
	return deployment{st.Name, st.EnvIndex, st.Requests["req-1"]}
}

// Attack 6: an agent cannot write into other units' history or invent
// metric series.
func TestAgentsCannotWriteIntoSharedViews(t *testing.T) {
	t.Parallel()
	s := startSecured(t)
	_, _, m1 := s.register(t, s.join, "m1")
	forged := []map[string]any{
		{"unit": "db/1", "hash": "x", "error": "\x1b[31mconnected to 6.6.6.6"},
		{"unit": "evil/0", "hash": "x", "error": "made up"},
	}
	for i := range 50 {
		forged = append(forged, map[string]any{"unit": fmt.Sprintf("made-up-%d/0", i), "hash": "x"})
	}
	if code, body := call(t, "POST", s.base+"/v1/agent/results?machine=m1", m1, forged); code != 200 {
		t.Fatalf("post forged results: %d %s", code, body)
	}
	code, body := call(t, "GET", s.base+"/v1/logs?after=0", s.operator, nil)
	if code != 200 {
		t.Fatalf("logs: %d %s", code, body)
	}
	for _, u := range []string{"db/1", "evil/0", "made-up-1/0", "6.6.6.6"} {
		if strings.Contains(body, u) {
			t.Errorf("the history records a run m1 does not run: %s in %s", u, body)
		}
	}
	code, metrics := call(t, "GET", s.base+"/metrics", "", nil)
	if code != 200 || strings.Contains(metrics, "evil") || strings.Contains(metrics, "made-up") {
		t.Errorf("/metrics carries made-up services (%d)", code)
	}
}

// Attack 6, on screen: what hooks and agents wrote is shown with its
// control characters escaped, in logs and in status.
func TestLogsAndStatusEscapeControlCharacters(t *testing.T) {
	t.Parallel()
	const evil = "ok\x1b[2J\x1b[31mconnected to 6.6.6.6\r\u202eevil"
	var b bytes.Buffer
	printRun(&b, engine.Run{Unit: "web/0", Outcome: engine.RunError, Hash: "abc", Error: evil,
		Changes: []engine.Change{{Key: "state.k\x1b", Old: `""`, New: `"` + evil + `"`}},
		Stderr:  "line one\n" + evil}, "")
	printStatusTo(&b, statusWith(evil), statusWith(evil), false)
	out := b.String()
	for _, bad := range []string{"\x1b", "\r", "\u202e"} {
		if strings.Contains(out, bad) {
			t.Fatalf("output carries %q unescaped:\n%s", bad, out)
		}
	}
	if !strings.Contains(out, `\x1b[31mconnected to 6.6.6.6`) || !strings.Contains(out, `\u202e`) {
		t.Fatalf("escaped text missing:\n%s", out)
	}
}

func statusWith(msg string) *engine.Status {
	return &engine.Status{Environment: "shop",
		Services: map[string]*engine.ServiceStatus{"web": {Charm: "c", Life: "alive", Units: 2}},
		Units: map[string]*engine.UnitStatus{
			"web/0": {Service: "web", Phase: engine.Settled, Status: model.Status{State: "active", Message: msg}},
			"web/1": {Service: "web", Phase: engine.Error, Error: msg},
		},
		Machines: map[string]*engine.MachineStatus{}}
}
