package model

import (
	"fmt"
	"slices"
	"strings"
)

// The debug log: what hooks print on stderr, their juju-log lines, and
// what agents and control-plane nodes log, each line with its time, its
// source and its level (`fixpoint debug-log`).
//
// Where it lives, and why: lines travel through Raft, in bounded batches
// (OpLogs), and every node keeps them in a Bounded store beside the state
// (raftstore's FSM), in the same snapshots. A leader change or a node's
// restart loses nothing acknowledged, since the log and its snapshots
// are what every node rebuilds from, and any node answers a read from
// its own copy. Per-node files read by fan-in would lose what a dead node
// held, which is exactly when an operator reads them. The price is that
// log bytes share the replication path with the state, so they are
// bounded everywhere: a line (MaxLogLine), a batch (MaxLogBatch), the
// bytes kept per source (LogBytesPerSource) and in total (LogBytesTotal,
// oldest dropped first), and the agents ship at most one batch at a time
// each, dropping (and counting) what their bounded buffer cannot hold.
// They are not in model.State itself, so that nothing the controller
// copies or hashes (Clone, Redacted, universes) ever carries them.

// Log bounds.
const (
	// MaxLogLine caps one line's message, in bytes; longer ones are cut.
	MaxLogLine = 2 << 10
	// MaxLogBatch caps the lines of one OpLogs command.
	MaxLogBatch = 512
	// LogBytesPerSource caps the memory kept of one unit, machine or
	// node (memcost.go counts it).
	LogBytesPerSource = 256 << 10
	// LogBytesTotal caps the memory kept in all.
	LogBytesTotal = 16 << 20
)

// Log levels, lowest first.
var LogLevels = []string{"debug", "info", "warning", "error"}

// Origins of a log line.
const (
	// OriginHook is a line a hook printed on stderr (or an old hook's
	// stdout).
	OriginHook = "hook"
	// OriginJujuLog is a `juju-log` call of an old hook.
	OriginJujuLog = "juju-log"
	// OriginAgent is the agent's own log.
	OriginAgent = "agent"
	// OriginNode is a control-plane node's log.
	OriginNode = "node"
)

var logOrigins = []string{OriginHook, OriginJujuLog, OriginAgent, OriginNode}

// LogLine is one line of the debug log. Exactly one source is named:
// Unit for a hook's lines (Machine then says where it ran), Machine for
// an agent's own lines, Node for a control-plane node's.
type LogLine struct {
	// Seq is the line's number in the debug log, given when it is kept.
	Seq uint64 `json:"seq,omitempty"`
	// Time is when the line was written, on its writer's clock (unix
	// nanoseconds).
	Time int64  `json:"time"`
	Unit string `json:"unit,omitempty"`
	// Env is the unit's environment, "" for the default one: the agent
	// stamps it from the work it ran (wire.Work.Env). Only a unit's line
	// names one; machines and nodes are the cluster's.
	Env     string `json:"env,omitempty"`
	Machine string `json:"machine,omitempty"`
	Node    string `json:"node,omitempty"`
	Level   string `json:"level"`
	Origin  string `json:"origin"`
	Message string `json:"message"`
}

// Source names where the line comes from: the unit, "machine M" or "node N".
func (l *LogLine) Source() string {
	switch {
	case l.Unit != "":
		return l.Unit
	case l.Machine != "":
		return "machine " + l.Machine
	}
	return "node " + l.Node
}

// key is the line's Bounded key: its source, a unit's prefixed by its
// environment's name outside the default one ("dev/db/0": a unit's name,
// a machine's and a node's key have one slash, so none of them is one of
// those).
func (l *LogLine) key() string {
	switch {
	case l.Unit != "" && l.Env != "":
		return l.Env + "/" + l.Unit
	case l.Unit != "":
		return l.Unit
	case l.Machine != "":
		return "machine/" + l.Machine
	}
	return "node/" + l.Node
}

// LogBatch is an OpLogs payload: lines in the order they were written.
type LogBatch struct {
	Lines []LogLine `json:"lines"`
}

func (b *LogBatch) check() error {
	if len(b.Lines) == 0 {
		return fmt.Errorf("a log batch holds no lines")
	}
	if len(b.Lines) > MaxLogBatch {
		return fmt.Errorf("%d log lines in one batch; the limit is %d", len(b.Lines), MaxLogBatch)
	}
	for i := range b.Lines {
		if err := b.Lines[i].Check(); err != nil {
			return fmt.Errorf("lines[%d]: %w", i, err)
		}
	}
	return nil
}

// Check checks one line as it arrives: one source with a valid name, a
// known level and origin, a time, a bounded printable message.
func (l *LogLine) Check() error {
	n := 0
	for _, s := range []string{l.Unit, l.Machine, l.Node} {
		if s != "" {
			n++
		}
	}
	switch {
	case l.Unit != "" && l.Node != "", l.Machine != "" && l.Node != "", n == 0:
		return fmt.Errorf("a log line names a unit (and its machine), a machine or a node")
	case l.Seq != 0:
		return fmt.Errorf("a log line's seq is given when it is kept; send it as 0")
	case l.Time <= 0:
		return fmt.Errorf("log line of %s: time %d is not a unix time in nanoseconds", l.Source(), l.Time)
	case !slices.Contains(LogLevels, l.Level):
		return fmt.Errorf("log line of %s: level must be %s; got %s", l.Source(), orList(LogLevels), Quote(l.Level, 24))
	case !slices.Contains(logOrigins, l.Origin):
		return fmt.Errorf("log line of %s: origin must be %s; got %s", l.Source(), orList(logOrigins), Quote(l.Origin, 24))
	case len(l.Message) > MaxLogLine:
		return fmt.Errorf("log line of %s: %d bytes; the limit is %d", l.Source(), len(l.Message), MaxLogLine)
	}
	if l.Unit != "" {
		if err := CheckUnitName(l.Unit); err != nil {
			return err
		}
	}
	if l.Env != "" {
		if l.Unit == "" {
			return fmt.Errorf("log line of %s names environment %s: only a unit's line names one", l.Source(), Quote(l.Env, 72))
		}
		if err := CheckName(KindEnv, l.Env); err != nil {
			return err
		}
	}
	if l.Machine != "" {
		if err := CheckName(KindMachine, l.Machine); err != nil {
			return err
		}
	}
	if l.Node != "" && (len(l.Node) > MaxNameLen || strings.ContainsFunc(l.Node, func(r rune) bool { return isControl(r) || r == ' ' })) {
		return fmt.Errorf("node name %s: at most %d printable bytes, no spaces", Quote(l.Node, 24), MaxNameLen)
	}
	return nil
}

// CleanLogMessage makes text one storable message: control characters
// but tabs become spaces, and it is cut to MaxLogLine bytes.
func CleanLogMessage(text string) string {
	text = strings.TrimRight(text, "\r\n")
	if strings.ContainsFunc(text, func(r rune) bool { return isControl(r) && r != '\t' }) {
		text = strings.Map(func(r rune) rune {
			if isControl(r) && r != '\t' {
				return ' '
			}
			return r
		}, text)
	}
	return Truncate(text, MaxLogLine)
}

// LogLevelAtLeast reports whether level is min or above; an empty min
// passes everything.
func LogLevelAtLeast(level, min string) bool {
	return min == "" || slices.Index(LogLevels, level) >= slices.Index(LogLevels, min)
}

// NewLogStore returns the bounded store of the debug log.
func NewLogStore() *Bounded[LogLine] {
	return NewBounded(LogBytesPerSource, LogBytesTotal, logSlot,
		func(l *LogLine) (string, int) { return l.key(), logLineCost(l) },
		func(l *LogLine, s uint64) { l.Seq = s },
		func(l *LogLine) uint64 { return l.Seq }).GroupBy(EnvOfKey)
}

// LogFilter selects debug-log lines, as `fixpoint debug-log` asks: an
// entity is a unit (svc/N), a service, a machine or a node name; a line
// matches one when it names it (a unit's line matches its service and the
// machine it ran on too).
type LogFilter struct {
	Include []string
	Exclude []string
	// Level is the lowest level shown; empty shows all.
	Level string
}

// Check refuses a filter with a bad level or too many or malformed
// entities.
func (f *LogFilter) Check() error {
	if f.Level != "" && !slices.Contains(LogLevels, f.Level) {
		return fmt.Errorf("level %s: use %s", Quote(f.Level, 24), orList(LogLevels))
	}
	if n := len(f.Include) + len(f.Exclude); n > 256 {
		return fmt.Errorf("%d include and exclude entities; the limit is 256", n)
	}
	for _, e := range slices.Concat(f.Include, f.Exclude) {
		if e == "" || len(e) > MaxNameLen+16 || strings.ContainsFunc(e, func(r rune) bool { return isControl(r) || r == ' ' }) {
			return fmt.Errorf("entity %s is not a unit, service, machine or node name", Quote(e, 24))
		}
	}
	return nil
}

// names reports whether l names entity e.
func (l *LogLine) names(e string) bool {
	return e == l.Unit || e == l.Machine || e == l.Node || (l.Unit != "" && e == ServiceOf(l.Unit))
}

// Match reports whether the filter passes l.
func (f *LogFilter) Match(l *LogLine) bool {
	if !LogLevelAtLeast(l.Level, f.Level) {
		return false
	}
	for _, e := range f.Exclude {
		if l.names(e) {
			return false
		}
	}
	if len(f.Include) == 0 {
		return true
	}
	for _, e := range f.Include {
		if l.names(e) {
			return true
		}
	}
	return false
}
