package engine

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// look is one work poll's look at its machine's work: what it asks, and
// what the look found. The poll hands it to lookQueue.do and reads the
// answer once do returns.
type look struct {
	machine string
	max     int
	// ctx is the poll's: a pushed look whose poll has ended claims
	// nothing.
	ctx context.Context
	// woken says the poll was woken for work, by its machine's signal
	// or by a push (counted in WorkStats.Wakeups when it looks).
	woken bool
	// parked says the poll is counted in dispatch.parked; the look
	// un-parks it, and parks it again if it found nothing.
	parked bool
	// pushed says a wake pushed the look and it is counted in
	// dispatch.pushed until a pass serves it; guarded by dispatch.mu.
	pushed bool
	// polling says the poll is counted in agents.polling: from its
	// first look to the look that finds work, which ends the count in
	// the same pass, so that no poll takes dispatch's lock again after
	// its answer.
	polling bool

	work []wire.Work
	next time.Time
	sig  *signal
	err  error
	done chan struct{}
	// state is lookAwake, lookAsleep or lookPushed (push.go); guarded by
	// lookQueue.mu.
	state int
}

// lookQueue batches the looks of work polls that arrive together: one
// goroutine serves every look queued, all of them in one pass under the
// store's read lock and dispatch's lock, and answers each as soon as its
// claim is made. The polls one change wakes are served together, so
// dispatch's lock is taken once per pass, not once per poll, and no
// hand-over of it waits for another poll's goroutine to be scheduled. Its
// own lock is a leaf.
type lookQueue struct {
	mu      sync.Mutex
	pending []*look
	serving bool
	// asleep holds, by machine, the looks of the polls asleep that a
	// wake may push (push.go); guarded by mu.
	asleep map[string][]*look
	// wokenTwice counts the pushed polls the signal woke as well
	// (WorkStats.WokenTwice); guarded by mu.
	wokenTwice int64
}

// A wake of every machine (a new leader's first refresh) pushes all
// their looks at once. maxPass bounds the looks one pass claims, all
// under mu, which status and reports wait for; maxAhead bounds about how
// many universes it builds ahead, which it holds with their encodings
// until its last claim: each look may ask for up to 256 units, so the
// bound keeps a pass's memory to about maxAhead universes however many
// polls are pushed into it.
const maxPass = 256

var maxAhead = 1024 // a variable for the tests

// do queues l and returns once it is answered. It starts the server of
// the queue if none runs.
func (q *lookQueue) do(d *dispatch, l *look) {
	done := make(chan struct{})
	l.done = done
	q.enqueue(d, l)
	<-done
}

// enqueue queues looks for the next pass, all together, and starts the
// queue's server if none runs. A pass takes its batch under mu too, so it
// holds every look of one call or none of them: a wake's pushed looks
// (dispatch.unlock) are served in one pass, up to maxPass.
func (q *lookQueue) enqueue(d *dispatch, looks ...*look) {
	q.mu.Lock()
	q.pending = append(q.pending, looks...)
	start := !q.serving
	q.serving = true
	q.mu.Unlock()
	if start {
		go q.serve(d)
	}
}

// take returns the next pass's batch, at most maxPass looks in the order
// they were queued; when none is left it stops the server and says so.
func (q *lookQueue) take() (batch []*look, more bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	batch = q.pending
	q.pending = nil
	if len(batch) > maxPass {
		batch, q.pending = batch[:maxPass:maxPass], batch[maxPass:]
	}
	if len(batch) == 0 {
		q.serving = false
		return nil, false
	}
	return batch, true
}

// putBack queues looks again ahead of the others: the next pass serves
// them first.
func (q *lookQueue) putBack(looks []*look) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pending = append(slices.Clip(looks), q.pending...)
}

// serve answers the queued looks, a pass at a time, until none is left.
// Each pass holds the store's read lock only for the looks queued when
// it began, so that entries (other agents' results) are applied between
// passes.
func (q *lookQueue) serve(d *dispatch) {
	handed := false
	for {
		batch, more := q.take()
		if !more {
			if handed && d.opts.Served != nil {
				d.opts.Served()
			}
			return
		}
		if d.servePass(batch) {
			handed = true
		}
	}
}

// servePass answers the looks of batch in one pass under the store's read
// lock and mu, with their universes built ahead (prebuild), and says
// whether any look was handed work.
func (d *dispatch) servePass(batch []*look) (handed bool) {
	answered := 0
	err := d.store.View(func(st *model.State) error {
		n, built := d.prebuild(st, batch)
		if n < len(batch) {
			// Served by the next pass, first.
			d.looks.putBack(batch[n:])
			batch = batch[:n]
		}
		d.lock()
		defer d.unlock()
		d.work.Passes++
		d.ahead = built
		// What the claims did not take is garbage after the pass.
		defer func() { d.ahead, d.taken = nil, nil }()
		for _, l := range batch {
			if d.answerLocked(st, l) {
				handed = true
			}
			answered++
		}
		return nil
	})
	for _, l := range batch[answered:] {
		// The store could not be read: every look of the pass reports
		// it.
		l.err = err
		close(l.done)
	}
	return handed
}

// answerLocked is lookLocked and the look's answer, with the wakes its
// claim made held until l.done is closed. A claim that rebuilds its
// unit's view requeues it and wakes the machine: made at once, the
// wake's signal would wake the poll being answered, which a push had
// already queued, a moment before its answer (WorkStats.WokenTwice).
// Held, it reaches the machine's other polls, and this one if it found
// nothing, in the same pass. It says whether the look was handed work.
// Called with mu.
func (d *dispatch) answerLocked(st *model.State, l *look) (handed bool) {
	d.looking = true
	d.lookLocked(st, l)
	handed = len(l.work) > 0
	close(l.done)
	d.looking = false
	for i, w := range d.held {
		if b := d.ready[w.machine]; b != nil {
			d.wakeMachine(w.machine, b, w.last)
		}
		d.held[i] = heldWake{}
	}
	d.held = d.held[:0]
	return handed
}

// lookLocked is one poll's look, called with mu and the store's read
// lock: it notes the contact, un-parks the poll, takes the machine's next
// signal and claims what may run; a poll that found nothing is parked
// again before the lock is released, so that a test (or status) sees it
// asleep as soon as it is, and one that found work is no longer counted
// as polling.
func (d *dispatch) lookLocked(st *model.State, l *look) {
	if !l.polling {
		d.agents.pollStarted(l.machine)
		l.polling = true
	}
	d.agents.heard(l.machine, d.opts.Now())
	if l.parked {
		d.parked[l.machine]--
		l.parked = false
	}
	d.unpush(l)
	if l.woken {
		d.work.Wakeups++
	}
	// Taken in the same pass as the claim: a unit queued after this
	// look closes it.
	l.sig = d.readyFor(l.machine).signal()
	l.work, l.next = nil, time.Time{}
	if l.ctx == nil || l.ctx.Err() == nil {
		l.work, l.next = d.claimLocked(st, l.machine, l.max)
	}
	if len(l.work) == 0 {
		d.parked[l.machine]++
		l.parked = true
		return
	}
	// The poll ends with this answer.
	d.agents.pollEnded(l.machine)
	l.polling = false
}

// prebuilt is a unit's universe built ahead of its claim, outside
// dispatch's lock (prebuild): what pick and hand would build, so that
// they only look it up.
type prebuilt struct {
	uni  *charmapi.Universe
	seen *model.Seen
	// hash is the universe's hash: the view's, or computed here
	// (rehashed, hashed bytes) if the view's was unknown.
	hash     string
	rehashed bool
	hashed   int
	// run is schedule.RunUniverse of uni with hash: what a run is given;
	// runJSON is run encoded, nil if it could not be (the answer then
	// encodes it, and reports why).
	run     charmapi.Universe
	runJSON []byte
}

// prebuild builds, with one worker per processor, the universes of the
// units the looks of batch would claim now, and returns them, by unit,
// for the pass's claims (takePrebuilt, run), with how many of
// the looks, from the first, the pass serves: the looks whose universes
// fit in maxAhead, and at least one. Called with the store's read lock,
// not mu: the state cannot move until the claims are made under the same read lock, and building
// (universe, hash, events) is what the claims cost, so it runs on every
// processor outside mu. What the claims then choose is decided afresh
// under mu: a unit built here and not chosen is dropped, and one chosen
// and not built here is built in its claim (takePrebuilt, run).
func (d *dispatch) prebuild(st *model.State, batch []*look) (int, map[string]*prebuilt) {
	// The state's lazily built lookups are built here, once, before the
	// workers read them.
	st.UnitsOf("")
	var first *aheadJob
	var b *builders
	d.lock()
	d.refreshLocked(st)
	now := d.opts.Now()
	served, n := len(batch), 0
	for li, l := range batch {
		if li > 0 && n >= maxAhead {
			served = li
			break
		}
		choice := d.queue.Choose(st, l.machine, now, d.entry)
		for i, name := range choice.Run {
			if l.max > 0 && i >= l.max {
				break
			}
			v, vs := d.stale.viewOf(name)
			if v == nil || d.claims[name] != nil {
				continue
			}
			j := aheadJob{name: name}
			if vs == viewCurrent {
				j.hash = v.hash
			}
			// One universe alone has nothing to share between
			// processors: the workers start with the second.
			switch n++; n {
			case 1:
				first = &j
			case 2:
				b = newBuilders(st)
				b.add(*first)
				fallthrough
			default:
				b.add(j)
			}
		}
	}
	d.unlock()
	if b == nil {
		return served, nil
	}
	return served, b.wait()
}

// takePrebuilt returns the universe built ahead for unit name, once, if
// it was built with the view's hash (hash, "" for a view to rebuild).
// Called with mu.
func (d *dispatch) takePrebuilt(name, hash string) *prebuilt {
	p := d.ahead[name]
	if p == nil || p.rehashed != (hash == "") || (hash != "" && p.hash != hash) {
		return nil
	}
	delete(d.ahead, name)
	d.work.Prebuilt++
	if d.taken == nil {
		d.taken = map[string]*prebuilt{}
	}
	d.taken[name] = p
	return p
}

// run returns the run universe built ahead for unit name from uni with
// hash, and its encoding, once, if uni is the one takePrebuilt returned
// this pass. Called with mu.
func (d *dispatch) run(name string, uni *charmapi.Universe, hash string) (*charmapi.Universe, []byte) {
	p := d.taken[name]
	if p == nil || p.uni != uni || p.hash != hash {
		return nil, nil
	}
	delete(d.taken, name)
	return &p.run, p.runJSON
}
