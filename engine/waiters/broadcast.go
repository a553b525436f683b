package waiters

// Broadcast wakes everyone waiting for the next change: waiters take the
// channel from Wait (or the signal from Signal) and block on it; NotifyAt
// closes it and starts the next one. The caller's lock guards it.
type Broadcast struct {
	cur *Signal
	// gen counts notifies: a waiter that read Gen with what it saw
	// learns of a notify it was not yet waiting for.
	gen uint64
	// taken says cur was handed to a waiter since the last notify. A
	// notify nobody waits for closes nothing and makes no channel:
	// every report notifies the machines of every queued unit, most
	// with no poll waiting.
	taken bool
}

// Signal is one round of a Broadcast: C is closed at its notify, and Last
// is what the notifier said then (the log's last index, for work polls).
// Last is written before C is closed, so a waiter that saw C closed reads
// it without the lock.
type Signal struct {
	ch   chan struct{}
	last uint64
}

// C is closed at the notify that ends this round.
func (s *Signal) C() <-chan struct{} { return s.ch }

// Last is what the notify that closed C said; read it only once C is
// closed.
func (s *Signal) Last() uint64 { return s.last }

// NewBroadcast returns a broadcast nobody waits on yet.
func NewBroadcast() Broadcast { return Broadcast{cur: &Signal{ch: make(chan struct{})}} }

// Wait returns the channel closed at the next notify.
func (b *Broadcast) Wait() <-chan struct{} {
	b.taken = true
	return b.cur.ch
}

// Signal returns the next notify's signal.
func (b *Broadcast) Signal() *Signal {
	b.taken = true
	return b.cur
}

// Notify wakes every waiter.
func (b *Broadcast) Notify() { b.NotifyAt(0) }

// NotifyAt wakes every waiter and tells them last.
func (b *Broadcast) NotifyAt(last uint64) {
	b.gen++
	if !b.taken {
		return
	}
	b.cur.last = last
	close(b.cur.ch)
	b.cur = &Signal{ch: make(chan struct{})}
	b.taken = false
}

// Gen counts the notifies so far.
func (b *Broadcast) Gen() uint64 { return b.gen }

// Since returns a channel closed at the next notify, or already closed
// if there was one after gen.
func (b *Broadcast) Since(gen uint64) <-chan struct{} {
	if b.gen != gen {
		return Closed
	}
	return b.Wait()
}

// Closed is a channel that is always closed.
var Closed = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()
