package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"

	"github.com/fixpoint/fixpoint/engine"
)

// check is one verdict of the run.
type check struct {
	name string
	ok   bool
	what string
}

// fixedPoint waits until the environment is converged with every unit
// settled (engine.FixedPoint), following the status summary through any
// server as `fixpoint wait` does (api.Client.Follow), and returns how long
// that took; on timeout the error names the units in the way.
func fixedPoint(ctx context.Context, c *cluster, bound time.Duration) (time.Duration, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	var last *engine.Summary
	reached := false
	c.client().Follow(ctx, false, nil, func(_, sum *engine.Summary) {
		last = sum
		if sum.Outcome(false) == engine.FixedPoint && sum.Phases.Units > 0 {
			reached = true
			cancel()
		}
	})
	took := time.Since(start)
	switch {
	case reached:
		return took, nil
	case last == nil:
		return took, fmt.Errorf("no fixed point within %s: no server answered", bound)
	}
	var in []string
	for _, u := range append(last.Errors, last.Stuck...) {
		in = append(in, strings.TrimSpace(fmt.Sprintf("%s %s %s", u.Unit, u.Phase, u.Message)))
	}
	return took, fmt.Errorf("no fixed point within %s: %s; in the way: %s", bound, last.Summary, strings.Join(in, ", "))
}

// caughtUp waits until every server has applied its whole log and all
// logs end at the same index; it returns that index.
func caughtUp(ctx context.Context, c *cluster, bound time.Duration) (uint64, error) {
	start := time.Now()
	var last string
	for time.Since(start) < bound {
		var sts []nodeStatus
		var errs []string
		for i := range c.servers {
			st, err := c.status(ctx, i)
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", c.servers[i].id, err))
				continue
			}
			sts = append(sts, st)
		}
		if len(errs) == 0 {
			same := true
			for _, st := range sts {
				same = same && st.AppliedIndex == st.LastIndex && st.LastIndex == sts[0].LastIndex
			}
			if same {
				return sts[0].LastIndex, nil
			}
		}
		last = fmt.Sprintf("%+v %s", sts, strings.Join(errs, "; "))
		if err := sleep(ctx, 300*time.Millisecond); err != nil {
			return 0, err
		}
	}
	return 0, fmt.Errorf("the servers did not reach the same applied and last index within %s: %s", bound, last)
}

// replicatedState is what the checks read of the state.
type replicatedState struct {
	Index      uint64            `json:"index"`
	Requests   map[string]uint64 `json:"requests"`
	RequestLog []string          `json:"request_log"`
}

// statesAgree reads every server's own copy of the state at one index
// (trying again while entries still land) and compares them byte for
// byte; it returns the copy.
func statesAgree(ctx context.Context, c *cluster) (*replicatedState, error) {
	var last string
	for range 20 {
		var bodies [][]byte
		var idx []string
		for i := range c.servers {
			var b []byte
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			h, err := c.call(cctx, i, http.MethodGet, "/v1/state?stale", nil, nil, &b)
			cancel()
			if err != nil {
				return nil, fmt.Errorf("read %s's state: %w", c.servers[i].id, err)
			}
			bodies = append(bodies, b)
			idx = append(idx, h.Get("X-Fixpoint-Index"))
		}
		if idx[0] == idx[1] && idx[1] == idx[2] {
			for i := 1; i < len(bodies); i++ {
				if !bytes.Equal(bodies[0], bodies[i]) {
					return nil, fmt.Errorf("%s and %s differ at index %s: %s", c.servers[0].id, c.servers[i].id, idx[0], firstDiff(bodies[0], bodies[i]))
				}
			}
			var st replicatedState
			if err := json.Unmarshal(bodies[0], &st); err != nil {
				return nil, err
			}
			return &st, nil
		}
		last = strings.Join(idx, ", ")
		if err := sleep(ctx, 500*time.Millisecond); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("the servers never answered at one index (last %s)", last)
}

// firstDiff shows where two documents part.
func firstDiff(a, b []byte) string {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	lo := max(0, n-60)
	return fmt.Sprintf("at byte %d: %q vs %q", n, a[lo:min(len(a), n+60)], b[lo:min(len(b), n+60)])
}

// lostWrites counts the acknowledged writes the state does not hold at
// their index. The state remembers the last few thousand request ids;
// a write older than all of them is checked by the history and the final
// value only.
func lostWrites(st *replicatedState, acked []ack) (lost int, checked int, missing []string) {
	oldest := uint64(0)
	if len(st.RequestLog) > 0 {
		oldest = st.Requests[st.RequestLog[0]]
	}
	for _, a := range acked {
		at, ok := st.Requests[a.ID]
		switch {
		case ok && at == a.Index:
			checked++
		case !ok && a.Index < oldest:
			// Forgotten by the state, not lost.
		default:
			lost++
			checked++
			missing = append(missing, fmt.Sprintf("%s acked at %d, held at %d", a.ID, a.Index, at))
		}
	}
	return lost, checked, missing
}

// finalValues reads every service's value from every server, each with
// its own linearizable read, and returns what differs from want.
func finalValues(ctx context.Context, c *cluster, want int) []string {
	var bad []string
	for i := range c.servers {
		for _, svc := range services() {
			// A slow answer is not a wrong one: a few tries.
			var v int
			var err error
			for try := 0; try < 4; try++ {
				if v, err = readValue(ctx, c, i, svc, 15*time.Second); err == nil {
					break
				}
			}
			if err != nil || v != want {
				bad = append(bad, fmt.Sprintf("%s on %s: %d (%v)", svc, c.servers[i].id, v, err))
			}
		}
	}
	return bad
}

// walsAgree opens every stopped server's Raft log and compares, entry by
// entry, the range all of them hold: same term, type and data. It
// returns the entries compared.
func walsAgree(c *cluster) (int, error) {
	type log struct {
		id          string
		w           *wal.WAL
		meta        *metadb.BoltMetaDB
		first, last uint64
	}
	var logs []log
	defer func() {
		for _, l := range logs {
			_ = l.w.Close()
			_ = l.meta.Close()
		}
	}()
	for _, s := range c.servers {
		dir := filepath.Join(s.dir, "raft", "wal")
		meta := &metadb.BoltMetaDB{}
		// The servers' segment size, should the open start a segment.
		w, err := wal.Open(dir, wal.WithSegmentSize(16<<20), wal.WithMetaStore(meta))
		if err != nil {
			_ = meta.Close()
			return 0, fmt.Errorf("open %s's log in %s: %w", s.id, dir, err)
		}
		first, _ := w.FirstIndex()
		last, _ := w.LastIndex()
		logs = append(logs, log{s.id, w, meta, first, last})
	}
	lo, hi := uint64(0), ^uint64(0)
	for _, l := range logs {
		lo, hi = max(lo, l.first), min(hi, l.last)
	}
	if lo == 0 || hi < lo {
		return 0, fmt.Errorf("the logs share no entries: %+v", logs)
	}
	n := 0
	for idx := lo; idx <= hi; idx++ {
		es := make([]raft.Log, len(logs))
		same := true
		for k, l := range logs {
			if err := l.w.GetLog(idx, &es[k]); err != nil {
				return n, fmt.Errorf("%s's entry %d: %w", l.id, idx, err)
			}
			e, ref := es[k], es[0]
			same = same && e.Term == ref.Term && e.Type == ref.Type && bytes.Equal(e.Data, ref.Data)
		}
		if !same {
			var each []string
			for k, e := range es {
				each = append(each, fmt.Sprintf("%s: term %d %v %q", logs[k].id, e.Term, e.Type, e.Data[:min(len(e.Data), 100)]))
			}
			return n, fmt.Errorf("entry %d differs (the logs span %d-%d): %s", idx, lo, hi, strings.Join(each, "; "))
		}
		n++
	}
	return n, nil
}

// hookOverlaps reads what the probe recorded: the overlaps, and how many
// hooks ran in all.
func hookOverlaps(e *environment) (overlaps []string, runs int, err error) {
	data, err := os.ReadFile(filepath.Join(e.runs, "overlaps"))
	if err == nil {
		overlaps = strings.Split(strings.TrimSpace(string(data)), "\n")
	} else if !os.IsNotExist(err) {
		return nil, 0, err
	}
	files, err := filepath.Glob(filepath.Join(e.runs, "*.runs"))
	if err != nil {
		return overlaps, 0, err
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return overlaps, runs, err
		}
		runs += bytes.Count(data, []byte("\n"))
	}
	return slices.Clip(overlaps), runs, nil
}
