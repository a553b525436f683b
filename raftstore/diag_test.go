package raftstore

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/fixpoint/fixpoint/model"
)

// The debug log and the unit events are in the snapshot: a node restored
// from it (a restart, a follower catching up) has the same lines and
// events with the same numbers, and numbers the next ones after them.
func TestDiagnosticsSurviveASnapshot(t *testing.T) {
	a := &applier{tb: t, f: newFSM(testLogger(t))}
	streamEnv(a, 1, 2)
	for i := range 3 {
		a.apply(&model.Command{Op: model.OpLogs, Logs: &model.LogBatch{Lines: []model.LogLine{
			{Time: int64(i + 1), Unit: "s0/0", Machine: "m0", Level: "info", Origin: model.OriginHook, Message: fmt.Sprint("line ", i)},
			{Time: int64(i + 1), Node: "n1", Level: "warning", Origin: model.OriginNode, Message: "node line"},
		}}})
	}
	streamResults(a, 1)
	snap, err := a.f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var sink memSink
	if err := snap.Persist(&sink); err != nil {
		t.Fatal(err)
	}
	g := newFSM(testLogger(t))
	if err := g.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
		t.Fatal(err)
	}
	for name, pair := range map[string][2]fmt.Stringer{
		"logs":   {dumpOf(a.f.diag.logs.Dump()), dumpOf(g.diag.logs.Dump())},
		"events": {dumpOf(a.f.diag.events.Dump()), dumpOf(g.diag.events.Dump())},
	} {
		if pair[0].String() != pair[1].String() {
			t.Errorf("%s after restore:\n%s\nwant\n%s", name, pair[1], pair[0])
		}
	}
	if st := g.diag.logs.Stats(); st.Records != 6 || st.Last != 6 {
		t.Fatalf("restored log: %+v; want 6 lines, last 6", st)
	}
	if st := g.diag.events.Stats(); st.Records == 0 {
		t.Fatal("no unit events restored")
	}
	// A bad batch never reaches the store, whoever proposed it.
	if out := a.f.applyCommand(99, &model.Command{Op: model.OpLogs, Logs: &model.LogBatch{Lines: []model.LogLine{{Unit: "x"}}}}); out == nil {
		t.Fatal("a malformed log batch was kept")
	} else if _, isErr := out.(error); !isErr {
		t.Fatalf("a malformed log batch answered %v", out)
	}
}

type dumpStringer string

func (d dumpStringer) String() string { return string(d) }

func dumpOf[T any](d *model.BoundedDump[T]) fmt.Stringer {
	return dumpStringer(fmt.Sprintf("%d %+v", d.Last, d.Records))
}
