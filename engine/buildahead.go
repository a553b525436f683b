package engine

import (
	"bytes"
	"runtime"
	"sync"

	"github.com/fixpoint/fixpoint/engine/ledger"
	"github.com/fixpoint/fixpoint/engine/schedule"
	"github.com/fixpoint/fixpoint/engine/unijson"
	"github.com/fixpoint/fixpoint/model"
)

// builders build a pass's universes ahead on every processor
// (buildAhead), each job as soon as it is chosen, so that building
// overlaps the choice instead of following it. The choice holds the
// ledger's lock, so adding a job never waits for the workers.
type builders struct {
	st     *model.State
	shared *buildCache
	mu     sync.Mutex
	more   sync.Cond // signalled when a job is added or the choice ends
	jobs   []ledger.AheadJob
	next   int // the first job no worker has taken
	chosen bool
	wg     sync.WaitGroup
	// built holds each worker's universes, by unit: a worker is started
	// for each job added until there is one per processor.
	built []map[string]*ledger.Prebuilt
}

// newBuilders returns the builders of a pass over st: the caller holds
// the store's read lock until wait returns.
func newBuilders(st *model.State) *builders {
	b := &builders{st: st, shared: newBuildCache(), built: make([]map[string]*ledger.Prebuilt, 0, runtime.GOMAXPROCS(0))}
	b.more.L = &b.mu
	return b
}

// work builds jobs until the choice is over and every job is taken,
// keeping what it built in b.built[w].
func (b *builders) work(w int) {
	defer b.wg.Done()
	built := map[string]*ledger.Prebuilt{}
	var scratch []byte // grows to the largest encoding yet
	for j, ok := b.take(); ok; j, ok = b.take() {
		var p *ledger.Prebuilt
		if p, scratch = buildOneAhead(b.st, j, b.shared, scratch); p != nil {
			built[j.Name] = p
		}
	}
	b.mu.Lock()
	b.built[w] = built
	b.mu.Unlock()
}

// add queues j for the workers, starting one more if there are fewer
// than processors.
func (b *builders) add(j ledger.AheadJob) {
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
func (b *builders) take() (ledger.AheadJob, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.next == len(b.jobs) && !b.chosen {
		b.more.Wait()
	}
	if b.next == len(b.jobs) {
		return ledger.AheadJob{}, false
	}
	j := b.jobs[b.next]
	b.next++
	return j, true
}

// wait ends the choice and returns what the workers built, by unit, once
// they have built every job, with how many universes that is and their
// encodings' bytes.
func (b *builders) wait() (*ledger.BuiltAhead, int, int64) {
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
	var size int64
	for _, p := range all {
		size += int64(len(p.RunJSON))
	}
	return ledger.NewBuiltAhead(all), len(all), size
}

// buildOneAhead builds j's universe, hashed if its view's hash is unknown,
// its run universe and that encoded in scratch, which it returns for the
// next (grown if it had to); nil if the unit is gone.
func buildOneAhead(st *model.State, j ledger.AheadJob, shared *buildCache, scratch []byte) (*ledger.Prebuilt, []byte) {
	p := &ledger.Prebuilt{Hash: j.Hash}
	var members [][]*member
	p.Uni, p.Seen, members = build(st, j.Name, shared)
	if p.Uni == nil {
		return nil, scratch
	}
	if p.Hash == "" {
		p.Hash, p.Hashed = hashWith(p.Uni, members)
		p.Rehashed = true
	}
	p.Run = schedule.RunUniverse(st, st.Units[j.Name], p.Uni, p.Hash, p.Seen)
	// Encoded in the worker's buffer, which seldom grows, and kept at
	// its size: the pass holds its encodings until its last claim, and
	// one large universe would otherwise size all that follow it.
	b, err := unijson.Append(scratch[:0], &p.Run, appendUnits(members))
	if err == nil {
		p.RunJSON = bytes.Clone(b)
	}
	return p, b[:0]
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
func (h *handout) buildAhead(st *model.State, batch []*pollLook) (int, *ledger.BuiltAhead) {
	// The state's lazily built lookups are built here, once, before the
	// workers read them.
	st.UnitsOf("")
	var first *ledger.AheadJob
	var b *builders
	add := func(j ledger.AheadJob) {
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
	served, w := h.ledger.PlanPass(st, len(batch), func(i int) (string, int) { return batch[i].machine, batch[i].max }, add, h.aheadBound())
	h.apply(w)
	if b == nil {
		return served, nil
	}
	built, n, size := b.wait()
	if n > 0 {
		h.aheadMean.Store(size/int64(n) + 1)
	}
	return served, built
}

// aheadBound is how many universes the next pass builds ahead: about
// aheadBytes' worth at the last pass's mean encoded size, within
// [minAhead, maxAhead].
func (h *handout) aheadBound() int {
	mean := h.aheadMean.Load()
	if mean <= 0 {
		return maxAhead
	}
	return int(min(max(aheadBytes/mean, minAhead), maxAhead))
}
