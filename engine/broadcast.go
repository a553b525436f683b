package engine

// broadcast wakes everyone waiting for the next change: waiters take the
// channel from wait and block on it; notify closes it and starts the next
// one. The caller's lock guards it.
type broadcast struct{ ch chan struct{} }

func newBroadcast() broadcast { return broadcast{ch: make(chan struct{})} }

// wait returns the channel closed at the next notify.
func (b *broadcast) wait() <-chan struct{} { return b.ch }

// notify wakes every waiter.
func (b *broadcast) notify() {
	close(b.ch)
	b.ch = make(chan struct{})
}
