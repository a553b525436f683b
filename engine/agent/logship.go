package agent

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// Shipper carries log lines to the control plane's debug log in batches,
// with back-pressure: lines wait in a bounded buffer, one batch is in
// flight at a time and batches leave at most every Pace, so a hook that
// floods its output costs the control plane a bounded rate of small Raft
// entries, never more. What the buffer cannot hold, or what would give
// one source more than half of it, is dropped on arrival and counted per
// source, so that a flooding hook leaves its neighbours room; the count travels as a warning line "N lines
// dropped" of that source, ahead of the next batch, so a reader sees
// where the gap is. Add never blocks: a hook's output is read at its own
// pace whatever the control plane does.
type Shipper struct {
	send func(ctx context.Context, lines []model.LogLine) error
	opts ShipperOptions

	mu      sync.Mutex
	buf     []model.LogLine
	bytes   int
	dropped map[string]*model.LogLine // per source: the dropped-lines line
	// held is what each source holds of buf: a source may hold at most
	// half of it, so that a flooding hook leaves room for its neighbours'
	// lines.
	held map[string]*share
	wake chan struct{}
	// failed counts batches the control plane refused or lost; the
	// shipper never logs its own failures, which it would ship again.
	failed int
	// logger and sink are the agent's logger and the sink on it.
	logger hclog.InterceptLogger
	sink   hclog.SinkAdapter
}

// ShipperOptions bound a Shipper; zero values take the defaults.
type ShipperOptions struct {
	// MaxLines and MaxBytes bound the buffer.
	MaxLines, MaxBytes int
	// BatchBytes bounds one batch's messages; a batch
	// also holds at most model.MaxLogBatch lines.
	BatchBytes int
	// Pace is the least time between two batches.
	Pace time.Duration
	// Now is the clock lines are stamped with (default time.Now).
	Now func() time.Time
}

// NewShipper returns a shipper that sends batches with send; Run sends.
func NewShipper(send func(ctx context.Context, lines []model.LogLine) error, opts ShipperOptions) *Shipper {
	if opts.MaxLines <= 0 {
		opts.MaxLines = 8192
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = 4 << 20
	}
	if opts.BatchBytes <= 0 {
		opts.BatchBytes = 256 << 10
	}
	if opts.Pace <= 0 {
		opts.Pace = 200 * time.Millisecond
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Shipper{send: send, opts: opts, dropped: map[string]*model.LogLine{}, held: map[string]*share{}, wake: make(chan struct{}, 1)}
}

// share is what one source holds of a Shipper's buffer.
type share struct{ lines, bytes int }

// sourceKey names l's source in a Shipper's maps.
func sourceKey(l *model.LogLine) string {
	return l.Env + "\x00" + l.Unit + "\x00" + l.Machine + "\x00" + l.Node
}

// Add queues a line (its Time set now when zero), or counts it dropped
// when the buffer is full. A count goes in as a line "N lines dropped" at
// the place of the gap, as soon as there is room again.
func (s *Shipper) Add(l model.LogLine) {
	if l.Time == 0 {
		l.Time = s.opts.Now().UnixNano()
	}
	l.Message = model.CleanLogMessage(l.Message)
	s.mu.Lock()
	if len(s.dropped) > 0 && s.roomLocked(0) {
		s.noteDropsLocked(false)
	}
	key := sourceKey(&l)
	if !s.roomLocked(len(l.Message)) || !s.shareLeftLocked(key, len(l.Message)) {
		d := s.dropped[key]
		if d == nil {
			d = &model.LogLine{Env: l.Env, Unit: l.Unit, Machine: l.Machine, Node: l.Node, Level: "warning", Origin: l.Origin}
			s.dropped[key] = d
		}
		d.Seq++ // the count, until the line is queued
		d.Time = l.Time
		s.mu.Unlock()
		return
	}
	s.appendLocked(l)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// roomLocked reports whether a line of n bytes fits; the dropped-lines
// lines are let in past the caps, one per source.
func (s *Shipper) roomLocked(n int) bool {
	return len(s.buf) < s.opts.MaxLines && s.bytes+n <= s.opts.MaxBytes
}

// shareLeftLocked reports whether source key may queue a line of n bytes
// without holding more than half the buffer.
func (s *Shipper) shareLeftLocked(key string, n int) bool {
	h := s.held[key]
	return h == nil || (h.lines < s.opts.MaxLines/2 && h.bytes+n <= s.opts.MaxBytes/2)
}

func (s *Shipper) appendLocked(l model.LogLine) {
	s.buf = append(s.buf, l)
	s.bytes += len(l.Message)
	key := sourceKey(&l)
	h := s.held[key]
	if h == nil {
		h = &share{}
		s.held[key] = h
	}
	h.lines++
	h.bytes += len(l.Message)
}

// noteDropsLocked queues a "N lines dropped" line per source that lost
// lines and has room in its share again (every such source when all), in
// the order of their last drop: the count stands where its source's gap
// ends.
func (s *Shipper) noteDropsLocked(all bool) {
	ds := make([]string, 0, len(s.dropped))
	for key := range s.dropped {
		if all || s.shareLeftLocked(key, 0) {
			ds = append(ds, key)
		}
	}
	slices.SortFunc(ds, func(a, b string) int { return cmp.Compare(s.dropped[a].Time, s.dropped[b].Time) })
	for _, key := range ds {
		l := *s.dropped[key]
		l.Message = fmt.Sprintf("%d lines dropped: the agent's log buffer was full", l.Seq)
		l.Seq = 0
		s.appendLocked(l)
		delete(s.dropped, key)
	}
}

// Failed counts the batches the control plane did not take.
func (s *Shipper) Failed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

// take removes the next batch, the oldest buffered lines; the counts of
// lines dropped since follow them once the buffer is empty.
func (s *Shipper) take() []model.LogLine {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.dropped) > 0 && len(s.buf) == 0 {
		s.noteDropsLocked(true)
	}
	var out []model.LogLine
	size := 0
	n := 0
	for n < len(s.buf) && len(out) < model.MaxLogBatch && (n == 0 || size+len(s.buf[n].Message) <= s.opts.BatchBytes) {
		l := &s.buf[n]
		size += len(l.Message)
		out = append(out, *l)
		key := sourceKey(l)
		if h := s.held[key]; h != nil {
			if h.lines--; h.lines <= 0 {
				delete(s.held, key)
			} else {
				h.bytes -= len(l.Message)
			}
		}
		n++
	}
	s.bytes -= size
	// A fresh slice: the old array would otherwise hold a flood's lines.
	if n > 0 {
		s.buf = append([]model.LogLine(nil), s.buf[n:]...)
	}
	return out
}

// Run sends batches until ctx ends. A batch the control plane could not
// take (a node down, no leader, busy) is sent again with backoff while
// new lines wait, and are dropped and counted once the buffer is full;
// one it refuses outright is dropped.
func (s *Shipper) Run(ctx context.Context) {
	var pending []model.LogLine
	failures := 0
	for {
		if pending == nil {
			pending = s.take()
		}
		if len(pending) == 0 {
			select {
			case <-ctx.Done():
				return
			case <-s.wake:
			}
			continue
		}
		err := s.send(ctx, pending)
		switch {
		case ctx.Err() != nil:
			return
		case err == nil:
			pending, failures = nil, 0
		case permanent(err):
			s.mu.Lock()
			s.failed++
			s.mu.Unlock()
			pending = nil
		default:
			failures++
			s.mu.Lock()
			s.failed++
			s.mu.Unlock()
			if !sleepCtx(ctx, retryDelay(failures)) {
				return
			}
			continue
		}
		if !sleepCtx(ctx, s.opts.Pace) {
			return
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Lines returns a writer that ships what is written to it a line at a
// time, as lines of unit on machine of the given origin and level. It
// never blocks and never fails, so it can sit beside a hook's capture.
func (s *Shipper) Lines(unit, machine, origin, level string) *LineWriter {
	return &LineWriter{s: s, tmpl: model.LogLine{Unit: unit, Machine: machine, Origin: origin, Level: level}}
}

// LineWriter splits a stream into lines for a Shipper; Close ships a last
// line without its newline.
type LineWriter struct {
	s       *Shipper
	tmpl    model.LogLine
	partial []byte
}

// Write ships each complete line of p.
func (w *LineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			// Keep at most one line's worth: a line longer than the cap
			// is cut anyway.
			if room := model.MaxLogLine - len(w.partial); room > 0 {
				w.partial = append(w.partial, p[:min(room, len(p))]...)
			}
			break
		}
		w.partial = append(w.partial, p[:min(i, max(model.MaxLogLine-len(w.partial), 0))]...)
		w.flush()
		p = p[i+1:]
	}
	return n, nil
}

func (w *LineWriter) flush() {
	l := w.tmpl
	l.Message = string(w.partial)
	w.partial = w.partial[:0]
	w.s.Add(l)
}

// Close ships what is left of the last line.
func (w *LineWriter) Close() error {
	if len(w.partial) > 0 {
		w.flush()
	}
	return nil
}

// Sink returns an hclog sink that ships what a logger logs: a line of a
// unit (a logger named after the unit: an old hook's output; a "unit"
// argument: the agent about the unit, or with a "hook" one juju-log) as
// that unit's, at every level; any other line at
// level or above as the machine's, or with node set as the node's. The
// arguments follow the message as key=value.
func (s *Shipper) Sink(machine, node string, level hclog.Level) hclog.SinkAdapter {
	return &shipSink{s: s, machine: machine, node: node, level: level}
}

type shipSink struct {
	s             *Shipper
	machine, node string
	level         hclog.Level
}

// Accept implements hclog.SinkAdapter.
func (k *shipSink) Accept(name string, level hclog.Level, msg string, args ...any) {
	if level == hclog.Off {
		return
	}
	l := model.LogLine{Machine: k.machine, Node: k.node, Level: levelName(level), Origin: model.OriginAgent}
	if k.node != "" {
		l.Origin = model.OriginNode
	} else if i := strings.LastIndexByte(name, '.'); i >= 0 && model.CheckUnitName(name[i+1:]) == nil {
		l.Unit, l.Origin = name[i+1:], model.OriginHook
		name = name[:i]
	}
	var b strings.Builder
	b.WriteString(msg)
	hook, unitArg := false, false
	for i := 0; i+1 < len(args); i += 2 {
		key, val := fmt.Sprint(args[i]), fmt.Sprint(args[i+1])
		switch {
		case key == "unit" && k.node == "" && model.CheckUnitName(val) == nil:
			l.Unit, unitArg = val, true
			continue
		case key == "env" && k.node == "" && (val == "" || model.CheckName(model.KindEnv, val) == nil):
			// The unit's environment (unitLog), "" the default one.
			l.Env = val
			continue
		case key == "hook":
			hook = true
		}
		fmt.Fprintf(&b, " %s=%s", key, val)
	}
	if unitArg && hook {
		// juju-log names the unit and its hook.
		l.Origin = model.OriginJujuLog
	}
	if l.Unit == "" && level < k.level {
		return
	}
	if l.Unit == "" && name != "" {
		l.Message = name + ": " + b.String()
	} else {
		l.Message = b.String()
	}
	k.s.Add(l)
}

func levelName(l hclog.Level) string {
	switch {
	case l >= hclog.Error:
		return "error"
	case l == hclog.Warn:
		return "warning"
	case l == hclog.Info:
		return "info"
	}
	return "debug"
}

// logClient is a Client that also takes log lines; api.Client is one.
type logClient interface {
	ShipLogs(ctx context.Context, machine string, lines []model.LogLine) error
}

// newShipper returns the agent's shipper, or nil when its client takes no
// log lines. An intercept logger's lines (info and above, every line of
// a unit) go to it from now on, so that the lines before the agent's
// registration are shipped too, once it has registered.
func newShipper(client Client, cfg Config) *Shipper {
	lc, ok := client.(logClient)
	if !ok {
		return nil
	}
	s := NewShipper(func(ctx context.Context, lines []model.LogLine) error {
		return lc.ShipLogs(ctx, cfg.Machine, lines)
	}, cfg.Ship)
	if il, ok := cfg.Log.(hclog.InterceptLogger); ok {
		s.sink = s.Sink(cfg.Machine, "", hclog.Info)
		s.logger = il
		il.RegisterSink(s.sink)
	}
	return s
}

// startShipping ships the lines until ctx ends; wg waits for it. The
// logger's lines stop going to the shipper then.
func (a *Agent) startShipping(ctx context.Context, wg *sync.WaitGroup) {
	s := a.ship
	if s == nil {
		return
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.Run(ctx)
		if s.logger != nil {
			s.logger.DeregisterSink(s.sink)
		}
	}()
}

// hookOutput is where a hook run's stderr goes besides its tail: the
// debug log, a line at a time; nil without a shipper.
func (a *Agent) hookOutput(w wire.Work) *LineWriter {
	if a.ship == nil {
		return nil
	}
	lw := a.ship.Lines(w.Unit, a.cfg.Machine, model.OriginHook, "info")
	lw.tmpl.Env = w.Env
	return lw
}

// unitLog is the log of w's unit's old hooks and operations: its lines
// reach the debug log as the unit's, in its environment.
func (a *Agent) unitLog(w wire.Work) hclog.Logger {
	l := a.cfg.Log.Named(w.Unit)
	if w.Env != "" {
		l = l.With("env", w.Env)
	}
	return l
}
