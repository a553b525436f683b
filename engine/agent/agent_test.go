package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/agent"
	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/engine/charm"
	"github.com/fixpoint/fixpoint/engine/legacy"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model/fault"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// fakePlane speaks the agent's half of the control-plane API over real
// HTTP, with scripted failures, so that the agent runs with the real
// api.Client: what it sees are the answers and envelopes a node gives.
type fakePlane struct {
	t       *testing.T
	charm   *charm.Packed
	reports chan []json.RawMessage // each accepted POST /v1/agent/results

	mu         sync.Mutex
	registered map[string]bool
	registers  int
	fetches    int
	handed     bool // the one unit of work was handed out since the last registration
	failClaims int  // answer this many claims with 503
	failPosts  int  // answer this many result posts with 503
	forbidWork bool // answer claims with 403
	holdPolls  bool // leave empty polls unanswered until the agent gives up
	held       int  // polls left unanswered
	postDelay  time.Duration
	sent       string // the universe handed out; "" is sentUniverse's
	idle       bool   // hand out no work
	placed     map[string]bool
	// batch, when set, is the work handed out (a JSON array) instead of
	// web/0 with sent; its "CHARM" is replaced by the charm's hash.
	batch string
	// gone are the unit keys the heartbeat answers as gone; goneEnvs the
	// environments it answers as gone when asked.
	gone     map[string]bool
	goneEnvs map[string]bool
	// beats are the heartbeats' bodies; polls the work polls' queries.
	beats []api.Heartbeat
	polls []string
}

func newFakePlane(t *testing.T) (*fakePlane, *httptest.Server) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "charm.cue"), []byte(`name: "web"
summary: "test charm: reports active"
`), 0o644))
	must(t, os.MkdirAll(filepath.Join(dir, "hooks"), 0o755))
	// The hook keeps the universe it was given and echoes its unit, so
	// the test sees the universe went in and the result came out.
	must(t, os.WriteFile(filepath.Join(dir, "hooks", "reconcile"), []byte(`#!/bin/sh
cat >universe.json
echo "$JUJU_MODEL_NAME $JUJU_MODEL_UUID" >model.txt
[ -e "$FIXPOINT_CHARM_DIR/../block-$JUJU_MODEL_NAME" ] && sleep 600
printf '{"status": {"state": "active", "message": "%s"}}\n' "$FIXPOINT_UNIT"
`), 0o755))
	p, err := charm.Pack(dir, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fakePlane{t: t, charm: p, reports: make(chan []json.RawMessage, 16), registered: map[string]bool{}, placed: map[string]bool{"web/0": true},
		gone: map[string]bool{}, goneEnvs: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/agent/register", f.register)
	mux.HandleFunc("GET /v1/agent/work", f.work)
	mux.HandleFunc("POST /v1/agent/results", f.results)
	mux.HandleFunc("POST /v1/agent/heartbeat", f.heartbeat)
	mux.HandleFunc("GET /v1/charms/{hash}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.fetches++
		f.mu.Unlock()
		http.ServeFile(w, r, p.Path)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakePlane) register(w http.ResponseWriter, r *http.Request) {
	var req api.Register
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		fault.Write(w, fault.Errorf(fault.KindBadRequest, "%v", err))
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.registers++
	f.registered[req.Machine] = true
	f.handed = false // a registering agent lost what it held
	writeJSON(w, api.Registered{Machine: req.Machine, Token: fmt.Sprintf("token-%d", f.registers)})
}

// heartbeat answers which of the kept units are not placed on the
// machine (f.placed).
func (f *fakePlane) heartbeat(w http.ResponseWriter, r *http.Request) {
	var hb api.Heartbeat
	if err := json.NewDecoder(r.Body).Decode(&hb); err != nil {
		fault.Write(w, fault.Errorf(fault.KindBadRequest, "%v", err))
		return
	}
	reply := api.HeartbeatReply{Machine: r.URL.Query().Get("machine")}
	f.mu.Lock()
	f.beats = append(f.beats, hb)
	for _, u := range hb.Kept {
		if !f.placed[u] {
			reply.Released = append(reply.Released, u)
		}
	}
	for _, u := range hb.Running {
		if f.gone[u] {
			reply.Gone = append(reply.Gone, u)
		}
	}
	for _, env := range hb.Envs {
		if f.goneEnvs[env] {
			reply.GoneEnvs = append(reply.GoneEnvs, env)
		}
	}
	f.mu.Unlock()
	writeJSON(w, reply)
}

// work hands out unit web/0 once per registration, then long-polls empty.
func (f *fakePlane) work(w http.ResponseWriter, r *http.Request) {
	machine := r.URL.Query().Get("machine")
	f.mu.Lock()
	f.polls = append(f.polls, r.URL.RawQuery)
	switch {
	case f.forbidWork:
		f.mu.Unlock()
		fault.Write(w, fault.Errorf(fault.KindForbidden, "agent of machine other may not claim for %s", machine))
		return
	case f.failClaims > 0:
		f.failClaims--
		f.mu.Unlock()
		fault.Write(w, fault.Errorf(fault.KindNoLeader, "no leader"))
		return
	case !f.registered[machine]:
		f.mu.Unlock()
		fault.Write(w, fault.Errorf(fault.KindNotRegistered, "machine %s is not registered", machine))
		return
	case !f.handed && !f.idle:
		f.handed = true
		uni, batch := f.sent, f.batch
		f.mu.Unlock()
		if batch != "" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, strings.ReplaceAll(batch, "CHARM", f.charm.Hash))
			return
		}
		if uni == "" {
			uni = sentUniverse(machine)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `[{"unit": "web/0", "hash": "h1", "charm": %q, "universe": %s}]`, f.charm.Hash, uni)
		return
	}
	hold := f.holdPolls
	if hold {
		f.held++
	}
	f.mu.Unlock()
	wait, _ := time.ParseDuration(r.URL.Query().Get("wait"))
	if hold {
		// As if a relay or a shared connection held the answer.
		<-r.Context().Done()
		return
	}
	select {
	case <-time.After(wait):
	case <-r.Context().Done():
	}
	writeJSON(w, []wire.Work{})
}

// sentUniverse is the universe the fake plane hands out, spaced and
// ordered as no encoder of the agent's would write it.
func sentUniverse(machine string) string {
	return fmt.Sprintf(`{"service": "web",  "unit": "web/0", "machine": %q, "relations": []}`, machine)
}

func (f *fakePlane) results(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	fail := f.failPosts > 0
	if fail {
		f.failPosts--
	}
	f.mu.Unlock()
	if fail {
		fault.Write(w, fault.Errorf(fault.KindUnavailable, "busy"))
		return
	}
	var reps []json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&reps); err != nil {
		fault.Write(w, fault.Errorf(fault.KindBadRequest, "%v", err))
		return
	}
	f.reports <- reps
	f.mu.Lock()
	delay := f.postDelay
	f.mu.Unlock()
	if delay > 0 {
		// As if a relay or a shared connection held the answer.
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
		}
	}
	writeJSON(w, map[string]any{})
}

// forget makes the plane lose every machine, as a restore from an older
// backup would, and hand the work out again.
func (f *fakePlane) forget() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.registered)
	f.handed = false
}

func (f *fakePlane) counts() (registers, fetches int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.registers, f.fetches
}

// start runs an agent for machine m1 on dataDir until the test ends or
// the returned stop is called; stop returns what Run returned.
func start(t *testing.T, url, dataDir string) (stop func() error) {
	return startLogged(t, url, dataDir, nil)
}

// startLogged is start with the agent logging to log.
func startLogged(t *testing.T, url, dataDir string, log hclog.Logger) (stop func() error) {
	return startConfig(t, url, agent.Config{Machine: "m1", Address: "10.0.0.1", DataDir: dataDir, Concurrency: 2,
		Poll: 50 * time.Millisecond, Heartbeat: time.Hour, Log: log})
}

// startConfig is start with the agent's whole configuration.
func startConfig(t *testing.T, url string, cfg agent.Config) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	client := api.NewClient([]string{url}, "join-token", nil)
	a := agent.New(client, cfg)
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			err = <-done
		})
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

// report waits for the next accepted result post and returns its one
// report, checking the output came as the hook's JSON (not base64).
func (f *fakePlane) report(t *testing.T) wire.Report {
	t.Helper()
	var reps []json.RawMessage
	select {
	case reps = <-f.reports:
	case <-time.After(time.Minute):
		t.Fatal("no report within a minute")
	}
	if len(reps) != 1 {
		t.Fatalf("%d reports, want 1", len(reps))
	}
	var raw struct {
		Output json.RawMessage `json:"output"`
	}
	must(t, json.Unmarshal(reps[0], &raw))
	if !strings.HasPrefix(string(raw.Output), "{") {
		t.Errorf("output travels as %s, want the hook's JSON object", raw.Output)
	}
	var rep wire.Report
	must(t, json.Unmarshal(reps[0], &rep))
	return rep
}

// Claim, run, report; through a leaderless spell and a busy node, both
// retried; then the plane forgets the machine and the agent registers
// again and gets its work again.
func TestClaimReportRetryReregister(t *testing.T) {
	f, srv := newFakePlane(t)
	f.failClaims, f.failPosts = 2, 1
	stop := start(t, srv.URL, t.TempDir())

	rep := f.report(t)
	if rep.Unit != "web/0" || rep.Hash != "h1" || rep.Error != "" {
		t.Fatalf("report %+v", rep)
	}
	res, err := engine.DecodeResult(&charmapi.Universe{Unit: "web/0"}, rep.Output)
	if err != nil || res.Status == nil || res.Status.State != "active" || res.Status.Message != "web/0" {
		t.Fatalf("result %+v, %v", res, err)
	}

	f.forget()
	rep = f.report(t)
	if rep.Unit != "web/0" || rep.Error != "" {
		t.Fatalf("report after re-registering %+v", rep)
	}
	if registers, fetches := f.counts(); registers != 2 || fetches != 1 {
		t.Errorf("%d registrations, %d charm fetches; want 2 and 1", registers, fetches)
	}
	if err := stop(); err != nil {
		t.Errorf("Run: %v", err)
	}
}

// The hook gets the universe as the control plane sent it, byte for byte,
// with its environment added as its last field: the agent decodes it for
// itself but does not encode it again.
func TestHookGetsTheUniverseAsSent(t *testing.T) {
	f, srv := newFakePlane(t)
	dir := t.TempDir()
	stop := start(t, srv.URL, dir)
	if rep := f.report(t); rep.Error != "" {
		t.Fatalf("report %+v", rep)
	}
	got, err := os.ReadFile(filepath.Join(dir, "units", "web-0", "universe.json"))
	must(t, err)
	sent := sentUniverse("m1")
	if want := sent[:len(sent)-1] + `,"env":{"name":"","uuid":"` + legacy.ModelUUID("") + `"}}`; string(got) != want {
		t.Errorf("the hook read\n%s\nthe plane sent\n%s", got, want)
	}
	if err := stop(); err != nil {
		t.Errorf("Run: %v", err)
	}
}

// A restarted agent keeps nothing that matters: it registers afresh, gets
// the same work again and runs it, with the charm it already unpacked.
func TestRestart(t *testing.T) {
	f, srv := newFakePlane(t)
	dir := t.TempDir()
	stop := start(t, srv.URL, dir)
	f.report(t)
	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	start(t, srv.URL, dir)
	if rep := f.report(t); rep.Unit != "web/0" || rep.Error != "" {
		t.Fatalf("report after the restart %+v", rep)
	}
	if registers, fetches := f.counts(); registers != 2 || fetches != 1 {
		t.Errorf("%d registrations, %d charm fetches; want 2 and 1", registers, fetches)
	}
}

// An answer retrying can not change ends the agent with that error
// instead of a retry loop.
func TestPermanentRefusalStopsTheAgent(t *testing.T) {
	f, srv := newFakePlane(t)
	f.forbidWork = true
	client := api.NewClient([]string{srv.URL}, "join-token", nil)
	a := agent.New(client, agent.Config{Machine: "m1", DataDir: t.TempDir(), Poll: 50 * time.Millisecond, Heartbeat: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := a.Run(ctx)
	if !errors.Is(err, api.ErrForbidden) || ctx.Err() != nil {
		t.Fatalf("Run: %v, want forbidden before the deadline", err)
	}
}

// A hook whose stdout is not JSON is reported as the engine's result
// decoder words it, and the report still travels.
func TestOutputThatIsNotJSON(t *testing.T) {
	f, srv := newFakePlane(t)
	dir := t.TempDir()
	// Unpack the charm where the agent looks for it, with a hook that
	// prints half a document.
	cdir := filepath.Join(dir, "charms", f.charm.Hash)
	must(t, charm.Unpack(f.charm.Path, f.charm.Hash, cdir))
	must(t, os.WriteFile(filepath.Join(cdir, "hooks", "reconcile"), []byte("#!/bin/sh\ncat >/dev/null\necho '{\"status\": '\n"), 0o755))
	must(t, os.WriteFile(filepath.Join(cdir, ".complete"), nil, 0o644))
	start(t, srv.URL, dir)
	var reps []json.RawMessage
	select {
	case reps = <-f.reports:
	case <-time.After(time.Minute):
		t.Fatal("no report within a minute")
	}
	var rep wire.Report
	must(t, json.Unmarshal(reps[0], &rep))
	if len(rep.Output) != 0 || !strings.Contains(rep.Error, "stdout is not a result object") {
		t.Fatalf("report %+v, want the decoder's error and no output", rep)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// logBuffer keeps what an agent logs, for a test to read while it runs.
type logBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newLog(b *logBuffer) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: b})
}

// waitLog waits for the agent to log a line at warn level holding want.
func waitLog(t *testing.T, b *logBuffer, want string, also func() bool) {
	t.Helper()
	rafttest.Eventually(t, time.Minute, fmt.Sprintf("a warning with %q", want), func() error {
		out := b.String()
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "[WARN]") && strings.Contains(line, want) && (also == nil || also()) {
				return nil
			}
		}
		return fmt.Errorf("the agent logged:\n%s", out)
	})
}

// A work poll whose answer does not come by its wait (and the grace a
// relay may take) ends: the agent says so at warn level and asks again.
func TestAHeldPollIsWarnedAndAskedAgain(t *testing.T) {
	f, srv := newFakePlane(t)
	f.holdPolls = true
	logs := &logBuffer{}
	startLogged(t, srv.URL, t.TempDir(), newLog(logs))
	f.report(t)
	waitLog(t, logs, "work poll ended by timeout", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.held >= 2
	})
}

// A results post the control plane answers late (it answers at once)
// is warned about: the agent's next work waits behind it.
func TestAHeldResultsAnswerIsWarned(t *testing.T) {
	f, srv := newFakePlane(t)
	f.postDelay = 20 * 50 * time.Millisecond // twenty of the agent's poll waits
	logs := &logBuffer{}
	startLogged(t, srv.URL, t.TempDir(), newLog(logs))
	f.report(t)
	waitLog(t, logs, "answer to a results post was held", nil)
}
