package engine

import (
	"runtime"
	"sync"

	"github.com/fixpoint/fixpoint/engine/schedule"
	"github.com/fixpoint/fixpoint/engine/unijson"
	"github.com/fixpoint/fixpoint/model"
)

// aheadJob is a unit whose universe a pass builds ahead.
type aheadJob struct {
	name string
	hash string // the view's, "" if it must be hashed
}

// builders build a pass's universes ahead on every processor (prebuild),
// each job as soon as it is chosen, so that building overlaps the choice
// instead of following it. The choice holds mu, so adding a job never
// waits for the workers.
type builders struct {
	st     *model.State
	shared *pass
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
	b := &builders{st: st, shared: newPass(), built: make([]map[string]*prebuilt, 0, runtime.GOMAXPROCS(0))}
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
		if p := buildAhead(b.st, j, b.shared, size); p != nil {
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
func (b *builders) wait() map[string]*prebuilt {
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
	return all
}

// buildAhead builds j's universe, hashed if its view's hash is unknown,
// its run universe and that encoded, with room for size bytes; nil if the
// unit is gone.
func buildAhead(st *model.State, j aheadJob, shared *pass, size int) *prebuilt {
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
