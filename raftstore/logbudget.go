package raftstore

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fixpoint/fixpoint/model"
)

// The debug log's lines share Raft with the state (model/logs.go): every
// line an agent posts is an entry on every node's disk until compaction.
// Agents bound themselves (engine/agent's Shipper), but a node cannot
// trust them to, so the leader — where every proposal is made, the ones
// followers forward included — holds each source of lines (a machine with
// its units, or a control-plane node) to a budget before it proposes
// them: so many bytes and lines a second, and at most one batch's worth
// at once. What is over it is dropped and counted, as an agent's own full
// buffer drops and counts: a warning line "N lines dropped" of the
// source goes ahead of its next lines that fit. An agent that spreads
// its batches over several nodes meets the same budget, since they all
// reach the leader; a new leader starts its budgets full, so a change of
// leader costs at most one more batch per source. A follower holds what it
// relays to the same budget first, with its own count lines, so that a
// flood posted to it costs the leader no more than the budget to decode;
// the leader adds the number of a count line it drops to its own count,
// so no dropped line goes uncounted.

// LogBudget bounds what one source of debug-log lines (a machine, a node)
// adds to the Raft log.
type LogBudget struct {
	// BytesPerSecond and LinesPerSecond are the sustained rates, in
	// message bytes and lines.
	BytesPerSecond int
	LinesPerSecond int
	// BatchBytes and BatchLines are the most taken at once: the budget
	// of a source that sent nothing for a while.
	BatchBytes int
	BatchLines int
}

// DefaultLogBudget is what a busy agent does not reach: the lines a
// second are Juju's log sink's rate per agent, the batch an agent's own
// (engine/agent.ShipperOptions), the bytes a second such that a thousand
// agents at it stay within what one disk writes.
var DefaultLogBudget = LogBudget{BytesPerSecond: 128 << 10, LinesPerSecond: 1000, BatchBytes: 256 << 10, BatchLines: model.MaxLogBatch}

// Check says which bound is out of range.
func (b LogBudget) Check() error {
	for _, f := range []struct {
		name string
		v    int
		top  int
	}{
		{"bytes a second", b.BytesPerSecond, 1 << 30},
		{"lines a second", b.LinesPerSecond, 1 << 20},
		{"bytes at once", b.BatchBytes, model.MaxCommandBytes / 2},
		{"lines at once", b.BatchLines, model.MaxLogBatch},
	} {
		if f.v < 1 || f.v > f.top {
			return fmt.Errorf("the debug-log budget's %s is %d; it must be between 1 and %d", f.name, f.v, f.top)
		}
	}
	return nil
}

// maxBudgets bounds the sources a leader keeps budgets of: past it, those
// refilled to the full and with nothing dropped are forgotten.
const maxBudgets = 4096

// logMeter is the leader's budget of each source.
type logMeter struct {
	budget LogBudget
	mu     sync.Mutex
	tanks  map[string]*logTank
}

// logTank is one source's budget: what it may still take now, and what
// it lost since its last count lines, by the unit whose lines they were
// ("" for the source's own), so that a count stands where its gap is.
type logTank struct {
	bytes, lines float64
	at           time.Time
	dropped      map[string]*lostLines
}

// lostLines counts one unit's dropped lines and when the last one was.
type lostLines struct {
	n        int
	lastDrop int64
}

// owed reports whether t holds a count not yet put in.
func (t *logTank) owed() bool { return len(t.dropped) > 0 }

// lose counts n lines of unit dropped at time at.
func (t *logTank) lose(unit string, n int, at int64) {
	if t.dropped == nil {
		t.dropped = map[string]*lostLines{}
	}
	d := t.dropped[unit]
	if d == nil {
		d = &lostLines{}
		t.dropped[unit] = d
	}
	d.n += n
	d.lastDrop = at
}

func newLogMeter(b LogBudget) *logMeter {
	return &logMeter{budget: b, tanks: map[string]*logTank{}}
}

// logSource is the budget a line is charged to: its machine (a unit's
// lines are its machine's), or its node.
func logSource(l *model.LogLine) string {
	if l.Machine != "" {
		return "machine " + l.Machine
	}
	return "node " + l.Node
}

// tank returns src's budget refilled to now.
func (m *logMeter) tank(src string, now time.Time) *logTank {
	t := m.tanks[src]
	if t == nil {
		if len(m.tanks) >= maxBudgets {
			m.forget(now)
		}
		t = &logTank{bytes: float64(m.budget.BatchBytes), lines: float64(m.budget.BatchLines), at: now}
		m.tanks[src] = t
		return t
	}
	if dt := now.Sub(t.at).Seconds(); dt > 0 {
		t.bytes = min(t.bytes+dt*float64(m.budget.BytesPerSecond), float64(m.budget.BatchBytes))
		t.lines = min(t.lines+dt*float64(m.budget.LinesPerSecond), float64(m.budget.BatchLines))
		t.at = now
	}
	return t
}

// forget drops the budgets that are full again and owe no count.
func (m *logMeter) forget(now time.Time) {
	for src, t := range m.tanks {
		full := now.Sub(t.at).Seconds()*float64(m.budget.LinesPerSecond)+t.lines >= float64(m.budget.BatchLines) &&
			now.Sub(t.at).Seconds()*float64(m.budget.BytesPerSecond)+t.bytes >= float64(m.budget.BatchBytes)
		if full && !t.owed() {
			delete(m.tanks, src)
		}
	}
}

// admit keeps the lines of b that fit their sources' budgets, in order,
// each source's count of lines dropped before them going first, and
// counts the others dropped. It returns nil when no line fits.
func (m *logMeter) admit(b *model.LogBatch, now time.Time) (kept *model.LogBatch, dropped int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]model.LogLine, 0, len(b.Lines))
	for i := range b.Lines {
		l := b.Lines[i]
		src := logSource(&l)
		t := m.tank(src, now)
		size := float64(len(l.Message))
		if t.lines < 1 || t.bytes < size {
			// A count another node put in goes on in this one's.
			n, ok := droppedCount(&l)
			if !ok {
				n = 1
			}
			t.lose(l.Unit, n, l.Time)
			dropped++
			continue
		}
		// The counts go in while the batch has room for them beside
		// every line still to come.
		if t.owed() && len(out)+len(t.dropped)+len(b.Lines)-i <= model.MaxLogBatch {
			out = m.appendCounts(out, src, &l, t)
		}
		t.lines--
		t.bytes -= size
		out = append(out, l)
	}
	if len(out) == 0 {
		return nil, dropped
	}
	return &model.LogBatch{Lines: out}, dropped
}

// wait is how long src waits, from now, until lines lines and size bytes
// (each at most a batch's, a line at least) fit its budget: 0 when they
// fit now.
func (m *logMeter) wait(src string, size, lines int, now time.Time) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tanks[src] == nil {
		return 0
	}
	t := m.tank(src, now)
	need := float64(min(max(size, 1), m.budget.BatchBytes))
	count := float64(min(max(lines, 1), m.budget.BatchLines))
	secs := max((count-t.lines)/float64(m.budget.LinesPerSecond), (need-t.bytes)/float64(m.budget.BytesPerSecond), 0)
	return time.Duration(secs * float64(time.Second))
}

// LogWait is how long machine's agent waits before a post of lines lines
// and size bytes of its lines (each at most a batch's) fits the budget
// this node holds it to (the leader's, or a follower's for what it
// relays): 0 when it fits now. The API holds a post that comes sooner
// before it reads its body, so that a flood costs the node its held
// connections, not the decoding of its batches, and an agent that says
// what it posts loses no line to the budget.
func (s *Store) LogWait(machine string, size, lines int) time.Duration {
	m := s.relayMeter
	if s.IsLeader() {
		m = s.logMeter
	}
	return m.wait("machine "+machine, size, lines, time.Now())
}

// countSuffix ends every count line's first clause; droppedCount reads
// it back.
const countSuffix = " lines dropped: "

// droppedCount is the number a count line (countLine) gives, when l is
// one. A forged one only changes the number a later count shows of the
// same source's own lines.
func droppedCount(l *model.LogLine) (int, bool) {
	head, rest, ok := strings.Cut(l.Message, countSuffix)
	if !ok || l.Level != "warning" || !strings.Contains(rest, "over its debug-log budget") {
		return 0, false
	}
	n, err := strconv.Atoi(head)
	if err != nil || n < 1 || n > 1<<40 {
		return 0, false
	}
	return n, true
}

// appendCounts appends to out the warnings that t's lines were dropped,
// one per unit that lost lines (and one of the source's own), in the
// order of their last drop, each of that unit and l's machine or node;
// t owes none after.
func (m *logMeter) appendCounts(out []model.LogLine, src string, l *model.LogLine, t *logTank) []model.LogLine {
	units := make([]string, 0, len(t.dropped))
	for u := range t.dropped {
		units = append(units, u)
	}
	slices.SortFunc(units, func(a, b string) int {
		return cmp.Or(cmp.Compare(t.dropped[a].lastDrop, t.dropped[b].lastDrop), cmp.Compare(a, b))
	})
	for _, u := range units {
		d := t.dropped[u]
		c := model.LogLine{Unit: u, Machine: l.Machine, Node: l.Node, Level: "warning", Origin: model.OriginAgent, Time: d.lastDrop}
		if l.Machine == "" {
			c.Origin = model.OriginNode
		}
		if c.Time <= 0 {
			c.Time = l.Time
		}
		c.Message = fmt.Sprintf("%d%s%s is over its debug-log budget of %d bytes and %d lines a second (the servers' --agent-log-* flags)",
			d.n, countSuffix, src, m.budget.BytesPerSecond, m.budget.LinesPerSecond)
		out = append(out, c)
	}
	clear(t.dropped)
	return out
}
