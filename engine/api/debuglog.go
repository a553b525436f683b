package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/engine/memgov"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/model/fault"
)

// The debug log over HTTP: agents post their lines (POST /v1/agent/logs),
// operators read them (GET /v1/debug-log). Lines are replicated (see
// model/logs.go for where they live and why), so any node answers a read
// from its own copy, and a reader that follows resumes after the last
// line number it saw on whichever node it reaches next.

// Diagnostics is what a Node may also keep: the debug log and the unit
// events. raftstore.Store keeps both.
type Diagnostics interface {
	LogStore() *model.Bounded[model.LogLine]
	EventStore() *model.Bounded[model.Event]
}

// DebugLog is the answer of GET /v1/debug-log.
type DebugLog struct {
	// Last is the number of the last line read; ask for lines after it
	// to follow.
	Last  uint64          `json:"last"`
	Lines []model.LogLine `json:"lines"`
	// Kept says what the node keeps: bytes, lines, the cap, and how many
	// lines were dropped to keep within it.
	Kept model.BoundedStats `json:"kept"`
}

// maxRead caps the lines or events one read answers; a reader pages on.
const maxRead = 2000

// logSlots is how many log batches one node proposes at a time: the
// debug log shares Raft with the state, so its share is bounded here and
// by each agent's one batch in flight.
const logSlots = 1

// diagAPI serves diagnostics: agents post their debug log, operators
// read it, the events, the apply times of entries and profiles.
type diagAPI struct {
	node Node
	gate *gate
	log  hclog.Logger
	// logSlots bounds the log batches this node proposes at once.
	logSlots chan struct{}
	// mem paces log posts under memory pressure (intake).
	mem *memgov.Governor
}

func (s *diagAPI) routes(mux *router) {
	// Profiles of a live node, for the operator only (see authorize).
	mux.HandleFunc("GET /v1/debug/applied", s.gate.leaderOnly(s.applied))
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("POST /v1/agent/logs", intake(s.mem, s.node, s.postLogs))
	mux.HandleFunc("GET /v1/debug-log", s.debugLog)
	mux.HandleFunc("GET /v1/events", s.events)
}

func (s *diagAPI) diagnostics(w http.ResponseWriter, r *http.Request) (Diagnostics, bool) {
	d, ok := baseNode(s.node).(Diagnostics)
	if !ok {
		writeKind(w, fault.KindUnavailable, "this node keeps no debug log or events")
		return d, false
	}
	// A node that lags the leader (a follower, or a new leader still
	// applying its predecessor's entries) first applies what the leader
	// has committed, so that every acknowledged line and event shows.
	// Without a leader it answers from its own copy: the debug log is
	// what an operator reads during an outage.
	ctx, cancel := context.WithTimeout(r.Context(), catchUpTimeout)
	defer cancel()
	_ = s.node.Linearize(ctx)
	return d, true
}

// postLogs serves POST /v1/agent/logs?machine=M: an agent's batch of
// lines, of its machine and of the units placed on it. Secret values the
// units see are scrubbed before the lines are proposed, so they never
// reach the log, a snapshot or a reader.
func (s *diagAPI) postLogs(w http.ResponseWriter, r *http.Request) {
	machine := r.URL.Query().Get("machine")
	if !s.logBudgetLeft(w, r, machine) {
		return
	}
	var batch model.LogBatch
	if !decode(w, r, &batch) {
		return
	}
	cmd := &model.Command{Op: model.OpLogs, Logs: &batch}
	if err := cmd.Validate(); err != nil {
		writeKind(w, fault.KindBadRequest, "logs: %v", err)
		return
	}
	kept := batch.Lines[:0]
	skipped := 0
	err := s.node.ViewCluster(func(c *model.Cluster) error {
		machineSecrets := map[string]bool{}
		for i := range batch.Lines {
			l := batch.Lines[i]
			if l.Node != "" {
				return fmt.Errorf("line %d names node %s: an agent posts its machine's lines and its units'", i, l.Node)
			}
			if l.Machine == "" && l.Unit != "" {
				return fmt.Errorf("line %d of unit %s names no machine", i, l.Unit)
			}
			if l.Machine != "" && l.Machine != machine {
				return fmt.Errorf("line %d names machine %s; this request is machine %s's", i, l.Machine, machine)
			}
			if l.Unit != "" {
				st, found := c.Lookup(l.Env)
				if l.Env == c.Default.Name {
					l.Env = ""
				}
				var u *model.Unit
				if found {
					u = st.Units[l.Unit]
				}
				if u == nil || u.Machine != machine {
					// A removed unit's last lines, or a unit moved away:
					// nobody may now answer for them.
					skipped++
					continue
				}
				l.Message = model.Scrub(l.Message, st.SecretsOf(l.Unit))
			} else {
				if len(machineSecrets) == 0 {
					// Every environment's units on the machine: the
					// machine's lines may print any of their secrets.
					for _, st := range c.States() {
						for _, u := range st.Units {
							if u.Machine == machine {
								for _, v := range st.SecretsOf(u.Name) {
									machineSecrets[v] = true
								}
							}
						}
					}
				}
				l.Message = model.Scrub(l.Message, slices.Collect(mapKeys(machineSecrets)))
			}
			kept = append(kept, l)
		}
		return nil
	})
	if err != nil {
		writeKind(w, fault.KindBadRequest, "logs: %v", err)
		return
	}
	if len(kept) == 0 {
		writeCompact(w, http.StatusOK, LogsPosted{Skipped: skipped})
		return
	}
	batch.Lines = kept
	if !s.takeLogSlot(r.Context()) {
		writeKind(w, fault.KindUnavailable, "the node is busy proposing other log lines; keep them and send again")
		return
	}
	defer func() { <-s.logSlots }()
	cmd.Time = time.Now().UnixNano()
	resp, err := s.node.Apply(r.Context(), cmd)
	if err != nil {
		writeStoreError(w, err, "logs")
		return
	}
	writeCompact(w, http.StatusOK, LogsPosted{Index: resp.Index, Kept: max(len(kept)-resp.Dropped, 0), Skipped: skipped, Dropped: resp.Dropped})
}

// logWaiter is a Node that holds agents' log lines to a budget;
// raftstore.Store is one.
type logWaiter interface {
	LogWait(machine string, size, lines int) time.Duration
}

// maxLogHold bounds how long a post over its machine's budget is held.
const maxLogHold = 2 * time.Second

// logBudgetLeft holds a post of machine's lines, before its body is read,
// until its size (the body's, which its lines' messages do not exceed;
// the largest a post may be when the body does not say) and its lines
// (as the query's lines= says; one when it does not) would fit its
// debug-log budget, for at most maxLogHold; a post of which
// not one line would fit then is answered 503 unread. An agent that keeps
// one batch in flight is slowed to its budget; one that floods costs the
// node a held connection per post (bounded per address), not the
// decoding of its batches.
func (s *diagAPI) logBudgetLeft(w http.ResponseWriter, r *http.Request, machine string) bool {
	lw, ok := baseNode(s.node).(logWaiter)
	if !ok {
		return true
	}
	size := int(r.ContentLength)
	if size < 0 {
		// Of unknown length: held as the largest a post may be.
		size = model.MaxCommandBytes
	}
	lines := 1
	if v := r.URL.Query().Get("lines"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > model.MaxLogBatch {
			writeKind(w, fault.KindBadRequest, "lines=%s: the lines a post holds, from 1 to %d", model.Quote(v, 24), model.MaxLogBatch)
			return false
		}
		lines = n
	}
	d := lw.LogWait(machine, size, lines)
	if d <= 0 {
		return true
	}
	t := time.NewTimer(min(d, maxLogHold))
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
		return false
	}
	if lw.LogWait(machine, 0, 1) <= 0 {
		return true
	}
	writeKind(w, fault.KindUnavailable, "machine %s is over its debug-log budget (the servers' --agent-log-* flags); keep the lines and send them again later", machine)
	return false
}

// LogsPosted answers POST /v1/agent/logs.
type LogsPosted struct {
	// Index is where the lines kept went in the log; 0 when none did.
	Index uint64 `json:"index,omitempty"`
	Kept  int    `json:"kept"`
	// Skipped counts lines of units no longer on the machine.
	Skipped int `json:"skipped,omitempty"`
	// Dropped counts lines over the machine's debug-log budget (the
	// leader's; raftstore.LogBudget): a warning line ahead of its next
	// lines kept says how many.
	Dropped int `json:"dropped,omitempty"`
}

// takeLogSlot waits a moment for the node's log slot: the agent's next
// batch waits behind it, which is the back-pressure.
func (s *diagAPI) takeLogSlot(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	select {
	case s.logSlots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func mapKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// debugLog serves GET /v1/debug-log?include=E,..&exclude=E,..&level=L
// &after=SEQ&tail=N&wait=D: the lines after SEQ (the first maxRead), or
// the last N; with wait, it blocks until a line after SEQ arrives or
// wait passes.
func (s *diagAPI) debugLog(w http.ResponseWriter, r *http.Request) {
	s = s.in(r)
	d, ok := s.diagnostics(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	f := model.LogFilter{Include: splitList(q.Get("include")), Exclude: splitList(q.Get("exclude")), Level: q.Get("level")}
	if err := f.Check(); err != nil {
		writeKind(w, fault.KindBadRequest, "debug-log: %v", err)
		return
	}
	rq, ok := readQuery(w, q)
	if !ok {
		return
	}
	store := d.LogStore()
	env := envOf(r)
	keyOK := func(k string) bool {
		_, ok := keyInEnv(k, env)
		return ok
	}
	lines, last := waitRead(r.Context(), store, rq, keyOK, f.Match)
	writeJSON(w, http.StatusOK, DebugLog{Last: last, Lines: nonNil(lines), Kept: store.Stats()})
}

// readQ is a read's position: after a number, or the last tail records.
type readQ struct {
	after uint64
	tail  int
	wait  time.Duration
}

func readQuery(w http.ResponseWriter, q map[string][]string) (readQ, bool) {
	var rq readQ
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	if a := get("after"); a != "" {
		n, err := strconv.ParseUint(a, 10, 64)
		if err != nil {
			writeKind(w, fault.KindBadRequest, "after=%q is not a number", a)
			return rq, false
		}
		rq.after = n
	}
	if t := get("tail"); t != "" {
		n, err := strconv.Atoi(t)
		if err != nil || n < 0 {
			writeKind(w, fault.KindBadRequest, "tail=%q is not a count", t)
			return rq, false
		}
		rq.tail = min(n, maxRead)
	}
	if ws := get("wait"); ws != "" {
		dur, err := time.ParseDuration(ws)
		if err != nil {
			writeKind(w, fault.KindBadRequest, "wait=%q is not a duration (e.g. 30s)", ws)
			return rq, false
		}
		rq.wait = min(dur, time.Minute)
	}
	return rq, true
}

// waitRead reads a store as rq says; with a wait and nothing to answer,
// it waits for the store to change, or for the wait to pass.
func waitRead[T any](ctx context.Context, b *model.Bounded[T], rq readQ, keyOK func(string) bool, ok func(*T) bool) ([]T, uint64) {
	if rq.tail > 0 {
		return b.Read(rq.after, keyOK, ok, rq.tail, true)
	}
	var timeout <-chan time.Time
	if rq.wait > 0 {
		t := time.NewTimer(rq.wait)
		defer t.Stop()
		timeout = t.C
	}
	for {
		changed := b.Changed()
		out, last := b.Read(rq.after, keyOK, ok, maxRead, false)
		if len(out) > 0 || timeout == nil {
			return out, last
		}
		// Nothing after rq.after matched: the next look starts at last.
		rq.after = last
		select {
		case <-changed:
		case <-timeout:
			return out, last
		case <-ctx.Done():
			return out, last
		}
	}
}

func splitList(s string) []string {
	var out []string
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}
