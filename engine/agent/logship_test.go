package agent

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// A flood written while the control plane holds the one batch in flight
// never blocks the writer: the buffer keeps its bound, the rest is
// counted, and the count arrives as a warning line of the same source
// after the lines kept before the gap.
func TestShipperFloodIsBoundedAndCounted(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var got []model.LogLine
	inFlight, most := 0, 0
	send := func(ctx context.Context, lines []model.LogLine) error {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		mu.Lock()
		inFlight--
		if len(lines) > model.MaxLogBatch {
			t.Errorf("a batch of %d lines", len(lines))
		}
		got = append(got, lines...)
		mu.Unlock()
		return nil
	}
	s := NewShipper(send, ShipperOptions{MaxLines: 100, Pace: time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	w := s.Lines("web/0", "m1", model.OriginHook, "info")
	const lines = 10000
	for i := range lines {
		fmt.Fprintf(w, "line %d\n", i)
	}
	w.Close()
	close(release)
	rafttest.Eventually(t, time.Minute, "every kept line and the drop counts shipped", func() error {
		mu.Lock()
		defer mu.Unlock()
		if n := len(got); n == 0 || !strings.Contains(got[n-1].Message, "lines dropped") {
			return fmt.Errorf("%d lines shipped, the last not a drop count", n)
		}
		return nil
	})
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if most != 1 {
		t.Errorf("%d batches in flight at once; want one", most)
	}
	kept, dropped := 0, 0
	for _, l := range got {
		var n int
		if _, err := fmt.Sscanf(l.Message, "%d lines dropped", &n); err == nil {
			dropped += n
			if l.Unit != "web/0" || l.Level != "warning" {
				t.Errorf("drop count %+v", l)
			}
			continue
		}
		kept++
		if l.Unit != "web/0" || l.Machine != "m1" || l.Time == 0 || !strings.HasPrefix(l.Message, "line ") {
			t.Errorf("shipped %+v", l)
		}
	}
	if kept+dropped != lines || kept > lines/2 {
		t.Fatalf("%d kept + %d dropped of %d written", kept, dropped, lines)
	}
}

// A source that fills its half of the buffer leaves the other half to its
// neighbours: a quiet unit's lines written in the middle of a flood are
// shipped, not counted dropped.
func TestShipperFloodLeavesRoomForNeighbours(t *testing.T) {
	s := NewShipper(func(context.Context, []model.LogLine) error { return nil }, ShipperOptions{MaxLines: 100})
	flood := s.Lines("flood/0", "m1", model.OriginHook, "info")
	quiet := s.Lines("chatty/1", "m1", model.OriginHook, "info")
	for i := range 1000 {
		fmt.Fprintf(flood, "flood %d\n", i)
		if i == 500 {
			fmt.Fprintf(quiet, "hello\n")
		}
	}
	var got []model.LogLine
	for b := s.take(); len(b) > 0; b = s.take() {
		got = append(got, b...)
	}
	kept := map[string]int{}
	dropped := map[string]int{}
	for _, l := range got {
		var n int
		if _, err := fmt.Sscanf(l.Message, "%d lines dropped", &n); err == nil {
			dropped[l.Unit] += n
			continue
		}
		kept[l.Unit]++
	}
	if kept["chatty/1"] != 1 || dropped["chatty/1"] != 0 {
		t.Errorf("the quiet unit's line: %d kept, %d dropped; want it kept", kept["chatty/1"], dropped["chatty/1"])
	}
	if kept["flood/0"] != 50 || kept["flood/0"]+dropped["flood/0"] != 1000 {
		t.Errorf("the flood: %d kept, %d dropped of 1000; want half the buffer kept and the rest counted", kept["flood/0"], dropped["flood/0"])
	}
}

// The sink sorts an agent's lines: a logger named after a unit is that
// unit's hook output, a "unit" and "hook" argument juju-log, the rest the
// machine's, which go below the sink's level no further.
func TestShipperSink(t *testing.T) {
	var got []model.LogLine
	s := NewShipper(func(context.Context, []model.LogLine) error { return nil }, ShipperOptions{})
	log := hclog.NewInterceptLogger(&hclog.LoggerOptions{Name: "agent", Level: hclog.Off})
	log.RegisterSink(s.Sink("m1", "", hclog.Info))
	log.Info("agent registered", "machine", "m1")
	log.Debug("polling")
	log.Named("web/0").Debug("hook output line", "hook", "install")
	log.Named("web/0").Info("from the charm", "unit", "web/0", "hook", "install")
	log.Debug("reconciled", "unit", "web/1", "took", "5ms")
	got = s.take()
	var desc []string
	for _, l := range got {
		desc = append(desc, fmt.Sprintf("%s %s %s %s", l.Source(), l.Level, l.Origin, l.Message))
	}
	want := []string{
		"machine m1 info agent agent: agent registered machine=m1",
		"web/0 debug hook hook output line hook=install",
		"web/0 info juju-log from the charm hook=install",
		"web/1 debug agent reconciled took=5ms",
	}
	if strings.Join(desc, "\n") != strings.Join(want, "\n") {
		t.Fatalf("sink shipped\n%s\nwant\n%s", strings.Join(desc, "\n"), strings.Join(want, "\n"))
	}
}

// The lines of another environment's unit name their environment: its
// old hooks' log (unitLog), the agent's lines about it and its reconcile
// hook's output; the default environment's units' lines name none.
func TestShippedLinesNameTheirEnvironment(t *testing.T) {
	s := NewShipper(func(context.Context, []model.LogLine) error { return nil }, ShipperOptions{})
	log := hclog.NewInterceptLogger(&hclog.LoggerOptions{Name: "agent", Level: hclog.Off})
	log.RegisterSink(s.Sink("m1", "", hclog.Info))
	a := &Agent{cfg: Config{Machine: "m1", Log: log}, ship: s}
	dev := wire.Work{Unit: "db/0", Env: "dev"}
	a.unitLog(dev).Info("from the charm", "unit", "db/0", "hook", "install")
	a.unitLog(wire.Work{Unit: "db/0"}).Info("from the charm", "unit", "db/0", "hook", "install")
	log.Debug("reconciled", "unit", "db/0", "env", "dev")
	lw := a.hookOutput(dev)
	fmt.Fprintln(lw, "stderr of dev's hook")
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}
	var desc []string
	for _, l := range s.take() {
		desc = append(desc, fmt.Sprintf("%q %s %s %s", l.Env, l.Source(), l.Origin, l.Message))
	}
	want := []string{
		`"dev" db/0 juju-log from the charm hook=install`,
		`"" db/0 juju-log from the charm hook=install`,
		`"dev" db/0 agent reconciled`,
		`"dev" db/0 hook stderr of dev's hook`,
	}
	if strings.Join(desc, "\n") != strings.Join(want, "\n") {
		t.Fatalf("shipped\n%s\nwant\n%s", strings.Join(desc, "\n"), strings.Join(want, "\n"))
	}
}
