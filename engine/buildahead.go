package engine

import (
	"runtime"
	"sync"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/schedule"
	"github.com/fixpoint/fixpoint/engine/unijson"
	"github.com/fixpoint/fixpoint/model"
)

// aheadJob is a unit whose universe a pass builds ahead.
type aheadJob struct {
	name string
	hash string // the view's, "" if it must be hashed
}

// builders build a pass's universes ahead on every processor
// (buildAhead), each job as soon as it is chosen, so that building
// overlaps the choice instead of following it. The choice holds the
// ledger's lock, so adding a job never waits for the workers.
type builders struct {
	st     *model.State
	shared *buildCache
	mu     sync.Mutex
	more   sync.Cond // signalled when a job is added or the choice ends
	jobs   []aheadJob
	next   int // the first job no worker has taken
	chosen bool
	wg     sync.WaitGroup
	// built holds each worker's universes, by unit: a worker is started
	// for each job added until there is one per processor.
	built []map[string]*prebuilt
}

// newBuilders returns the builders of a pass over st: the caller holds
// the store's read lock until wait returns.
func newBuilders(st *model.State) *builders {
	b := &builders{st: st, shared: newBuildCache(), built: make([]map[string]*prebuilt, 0, runtime.GOMAXPROCS(0))}
	b.more.L = &b.mu
	return b
}

// work builds jobs until the choice is over and every job is taken,
// keeping what it built in b.built[w].
func (b *builders) work(w int) {
	defer b.wg.Done()
	built := map[string]*prebuilt{}
	size := 0 // of the largest encoding yet, room for the next
	for j, ok := b.take(); ok; j, ok = b.take() {
		if p := buildOneAhead(b.st, j, b.shared, size); p != nil {
			built[j.name] = p
			size = max(size, len(p.runJSON))
		}
	}
	b.mu.Lock()
	b.built[w] = built
	b.mu.Unlock()
}

// add queues j for the workers, starting one more if there are fewer
// than processors.
func (b *builders) add(j aheadJob) {
	b.mu.Lock()
	b.jobs = append(b.jobs, j)
	w := len(b.built)
	start := w < cap(b.built)
	if start {
		b.built = b.built[:w+1]
		b.wg.Add(1)
	}
	b.mu.Unlock()
	if start {
		go b.work(w)
	} else {
		b.more.Signal()
	}
}

// take returns the next job, waiting for one while the choice goes on;
// false once every job is taken and the choice is over.
func (b *builders) take() (aheadJob, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.next == len(b.jobs) && !b.chosen {
		b.more.Wait()
	}
	if b.next == len(b.jobs) {
		return aheadJob{}, false
	}
	j := b.jobs[b.next]
	b.next++
	return j, true
}

// wait ends the choice and returns what the workers built, by unit, once
// they have built every job.
func (b *builders) wait() *builtAhead {
	b.mu.Lock()
	b.chosen = true
	b.mu.Unlock()
	b.more.Broadcast()
	b.wg.Wait()
	// Every worker has stored its map: wg orders them before this.
	all := b.built[0]
	for _, built := range b.built[1:] {
		for name, p := range built {
			all[name] = p
		}
	}
	return &builtAhead{built: all}
}

// buildOneAhead builds j's universe, hashed if its view's hash is unknown,
// its run universe and that encoded, with room for size bytes; nil if the
// unit is gone.
func buildOneAhead(st *model.State, j aheadJob, shared *buildCache, size int) *prebuilt {
	p := &prebuilt{hash: j.hash}
	var members [][]*member
	p.uni, p.seen, members = build(st, j.name, shared)
	if p.uni == nil {
		return nil
	}
	if p.hash == "" {
		p.hash, p.hashed = hashWith(p.uni, members)
		p.rehashed = true
	}
	p.run = schedule.RunUniverse(st, st.Units[j.name], p.uni, p.hash, p.seen)
	// Sized for the largest encoding this worker has made, so the
	// buffer seldom grows.
	if b, err := unijson.Append(make([]byte, 0, size), &p.run, appendUnits(members)); err == nil {
		p.runJSON = b
	}
	return p
}

// prebuilt is a unit's universe built ahead of its claim, outside the
// ledger's lock (buildAhead): what pick and hand would build, so that
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

// builtAhead is a pass's build-ahead, handed to its claims: the
// universes built, by unit, and those the claims took, whose run
// universes hand then takes (run). It belongs to the pass; a nil
// builtAhead holds nothing.
type builtAhead struct {
	built, taken map[string]*prebuilt
}

// take returns the universe built ahead for unit name, once, if it was
// built with the view's hash (hash, "" for a view to rebuild).
func (a *builtAhead) take(name, hash string) *prebuilt {
	if a == nil {
		return nil
	}
	p := a.built[name]
	if p == nil || p.rehashed != (hash == "") || (hash != "" && p.hash != hash) {
		return nil
	}
	delete(a.built, name)
	if a.taken == nil {
		a.taken = map[string]*prebuilt{}
	}
	a.taken[name] = p
	return p
}

// run returns the run universe built ahead for unit name from uni with
// hash, and its encoding, once, if uni is the one take returned.
func (a *builtAhead) run(name string, uni *charmapi.Universe, hash string) (*charmapi.Universe, []byte) {
	if a == nil {
		return nil, nil
	}
	p := a.taken[name]
	if p == nil || p.uni != uni || p.hash != hash {
		return nil, nil
	}
	delete(a.taken, name)
	return &p.run, p.runJSON
}

// takeAhead is ahead.take, counted. Called with mu.
func (l *ledger) takeAhead(ahead *builtAhead, name, hash string) *prebuilt {
	p := ahead.take(name, hash)
	if p != nil {
		l.counts.prebuilt.Add(1)
	}
	return p
}

// buildAhead builds, with one worker per processor, the universes of the
// units the looks of batch would claim now, and returns them for the
// pass's claims, with how many of the looks, from the first, the pass
// serves: the looks whose universes fit in maxAhead, and at least one.
// Called with the store's read lock, not the ledger's: the state cannot
// move until the claims are made under the same read lock, and building
// (universe, hash, events) is what the claims cost, so it runs on every
// processor outside the ledger's lock. What the claims then choose is
// decided afresh: a unit built here and not chosen is dropped, and one
// chosen and not built here is built in its claim.
func (h *handout) buildAhead(st *model.State, batch []*look) (int, *builtAhead) {
	// The state's lazily built lookups are built here, once, before the
	// workers read them.
	st.UnitsOf("")
	var first *aheadJob
	var b *builders
	add := func(j aheadJob) {
		// One universe alone has nothing to share between processors:
		// the workers start with the second.
		switch {
		case first == nil:
			first = &j
		case b == nil:
			b = newBuilders(st)
			b.add(*first)
			b.add(j)
		default:
			b.add(j)
		}
	}
	served, w := h.ledger.planPass(st, len(batch), func(i int) (string, int) { return batch[i].machine, batch[i].max }, add, maxAhead)
	h.apply(w)
	if b == nil {
		return served, nil
	}
	return served, b.wait()
}

// planPass chooses, under mu, what each of n looks (look says the
// machine and most units of the i-th) would claim now, and adds each
// unit to build ahead to add, up to about bound; it returns how many
// looks, from the first, fit (at least one), and the wakes its refresh
// owes.
func (l *ledger) planPass(st *model.State, n int, look func(i int) (machine string, max int), add func(aheadJob), bound int) (served int, w *wakes) {
	l.lock()
	l.refreshLocked(st)
	now := l.opts.Now()
	served, jobs := n, 0
	for li := range n {
		if li > 0 && jobs >= bound {
			served = li
			break
		}
		machine, max := look(li)
		choice := l.queue.Choose(st, machine, now, l.entry)
		for i, name := range choice.Run {
			if max > 0 && i >= max {
				break
			}
			v, vs := l.stale.viewOf(name)
			if v == nil || l.claims[name] != nil {
				continue
			}
			j := aheadJob{name: name}
			if vs == viewCurrent {
				j.hash = v.hash
			}
			jobs++
			add(j)
		}
	}
	return served, l.unlock()
}
