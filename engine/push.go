package engine

import "slices"

// A sleeping work poll is answered by the wake that concerns it: the wake,
// made under dispatch's lock, queues the poll's look itself, and every
// look pushed under one hold of that lock is queued in one lookQueue call
// as the lock is released (dispatch.unlock), so that a pass starts with
// every look of the change, instead of the first polls to wake starting
// a pass of their own and the rest waiting for it to end.
//
// A look is pushed only when the entries in the log at the wake are all
// applied, which is what the woken poll's burst would wait for; otherwise
// the poll wakes and looks as before.

// Where a look is between its poll and the wakes; guarded by lookQueue.mu.
const (
	// lookAwake: the poll's goroutine holds the look.
	lookAwake = iota
	// lookAsleep: the poll sleeps until a wake, its timer or its end;
	// a wake may push the look.
	lookAsleep
	// lookPushed: a wake queued the look; the poll waits for its
	// answer (done).
	lookPushed
)

// sleep registers l, whose poll is about to sleep, for a push by its
// machine's next wake. It also drops the looks of polls that woke
// without a push, so each machine's list holds its sleeping polls only.
func (q *lookQueue) sleep(l *look) {
	q.mu.Lock()
	defer q.mu.Unlock()
	l.done = make(chan struct{})
	l.state = lookAsleep
	if q.asleep == nil {
		q.asleep = map[string][]*look{}
	}
	ls := slices.DeleteFunc(q.asleep[l.machine], func(o *look) bool { return o.state != lookAsleep })
	q.asleep[l.machine] = append(ls, l)
}

// awake takes l back for its poll, woken by anything, and reports whether
// a wake pushed it first: its answer then comes on l.done. Otherwise
// l.woken notes whether the poll's signal fired (a pushed look was woken
// by its push).
func (q *lookQueue) awake(l *look, signalled bool) (pushed bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if l.state == lookPushed {
		select {
		case <-l.done:
			// Answered: a signal after the answer woke nobody twice.
		default:
			if signalled {
				q.wokenTwice++
			}
		}
		return true
	}
	l.state = lookAwake
	l.woken = signalled
	if ls := q.asleep[l.machine]; len(ls) > 0 {
		ls = slices.DeleteFunc(ls, func(o *look) bool { return o == l })
		if len(ls) == 0 {
			delete(q.asleep, l.machine)
		} else {
			q.asleep[l.machine] = ls
		}
	}
	return false
}

// push queues the looks of machine's sleeping polls, woken by a wake
// that told them last (the log's last index then), if every entry up to
// last is applied. Called with mu, right before the machine's notify
// (wakeMachine): after it, the woken polls would take their looks back
// first.
//
// It reports whether every poll of the machine that looked and found
// nothing (dispatch.parked) is now pushed and waits for a pass: the
// notify then has nobody to wake. A pushed poll waits for its answer as
// well as for the signal; a poll that looked before the wake but is not
// asleep yet, or one that a pass served and is going back to sleep, is
// parked and not pushed, so it still gets the signal. A pushed poll is
// woken once, by its answer, not also by the signal, so the wake loop
// does not race the goroutines it wakes for the queue's lock.
func (d *dispatch) push(machine string, last uint64) (all bool) {
	q := &d.looks
	q.mu.Lock()
	// The log is asked only for a machine with a poll asleep: a report
	// wakes the machines of every queued unit, most of them running
	// hooks, and the store answers an index still in flight by reading
	// the log.
	var pushed []*look
	if len(q.asleep[machine]) > 0 {
		if log, ok := d.store.(InFlight); ok && last > 0 && log.Applied(last) {
			for _, l := range q.asleep[machine] {
				if l.state == lookAsleep {
					l.state = lookPushed
					l.woken = true
					pushed = append(pushed, l)
				}
			}
			delete(q.asleep, machine)
		}
	}
	q.mu.Unlock()
	if len(pushed) > 0 {
		for _, l := range pushed {
			l.pushed = true
		}
		d.pushed[machine] += len(pushed)
		d.work.Pushed += int64(len(pushed))
		// Queued together with every other look pushed under mu, when
		// mu is released (unlock).
		d.pushing = append(d.pushing, pushed...)
	}
	// Pushed by this wake or by an earlier one of the same refresh.
	n := d.pushed[machine]
	return n > 0 && n == d.parked[machine]
}

// unpush ends l's count as pushed: a pass served it, or its poll ended.
// Called with mu.
func (d *dispatch) unpush(l *look) {
	if !l.pushed {
		return
	}
	l.pushed = false
	if d.pushed[l.machine]--; d.pushed[l.machine] == 0 {
		delete(d.pushed, l.machine)
	}
}

// twice is how many pushed polls their signal woke as well.
func (q *lookQueue) twice() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.wokenTwice
}
