package raftstore

import (
	"bufio"
	"encoding/json"
	"fmt"

	"github.com/fixpoint/fixpoint/model"
)

// diagnostics are what an operator reads to find out what happened: the
// debug log (model/logs.go) and the unit events (model/events.go). They
// are replicated like the state (log lines as OpLogs entries, events
// derived from the entries that cause them), kept in bounded stores
// beside it and written into the same snapshots, so every node holds the
// same ones, a new leader has them all, and a restarted node rebuilds
// them from its snapshot and log. They are not part of model.State: the
// controller's copies and hashes of the state never carry them, and
// readers take the stores' own locks, never the state's.
//
// A backup restore replaces the state but keeps them: they record what
// happened, the restore included.
type diagnostics struct {
	logs   *model.Bounded[model.LogLine]
	events *model.Bounded[model.Event]
}

func newDiagnostics() diagnostics {
	return diagnostics{logs: model.NewLogStore(), events: model.NewEventStore()}
}

// applyLogs keeps an OpLogs entry's lines. Validate runs again: the FSM
// is the judge of what it keeps, whatever a proposer checked.
func (d diagnostics) applyLogs(index uint64, c *model.Command) any {
	if err := c.Validate(); err != nil {
		return err
	}
	d.logs.Add(c.Logs.Lines)
	return &model.Response{Index: index}
}

// load replaces both stores with a snapshot's (empty when it has none).
func (d diagnostics) load(doc *document) {
	d.logs.Load(doc.Logs)
	d.events.Load(doc.Events)
}

// writeDiagnostics appends the stores' dumps to a document being
// written, as json.Marshal of document writes them.
func writeDiagnostics(w *bufio.Writer, logs *model.BoundedDump[model.LogLine], events *model.BoundedDump[model.Event]) error {
	for _, f := range []struct {
		name string
		v    any
		nil  bool
	}{{"logs", logs, logs == nil}, {"events", events, events == nil}} {
		if f.nil {
			continue
		}
		b, err := json.Marshal(f.v)
		if err != nil {
			return fmt.Errorf("encode snapshot %s: %w", f.name, err)
		}
		fmt.Fprintf(w, `,%q:`, f.name)
		w.Write(b)
	}
	return nil
}

// LogStore is the debug log this node keeps. Read it; the FSM is its only
// writer.
func (s *Store) LogStore() *model.Bounded[model.LogLine] { return s.fsm.diag.logs }

// EventStore is the unit events this node keeps. Read it; the FSM is its
// only writer.
func (s *Store) EventStore() *model.Bounded[model.Event] { return s.fsm.diag.events }
