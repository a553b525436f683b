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
// each job as soon as it is chosen: started once the choice is made, the
// builds waited for the whole choice, 0.2-0.4 ms of one core under mu for
// a change's 100 looks (bench/agents' traced stages). The choice holds mu,
// so adding a job never waits for the workers.
type builders struct {
	mu     sync.Mutex
	more   sync.Cond // signalled when a job is added or the choice ends
	jobs   []aheadJob
	next   int // the first job no worker has taken
	chosen bool
	wg     sync.WaitGroup
	// built holds each worker's universes, by unit.
	built []map[string]*prebuilt
}

// startBuilders starts the workers, which read st: the caller holds the
// store's read lock until wait returns.
func startBuilders(st *model.State) *builders {
	n := runtime.GOMAXPROCS(0)
	b := &builders{built: make([]map[string]*prebuilt, n)}
	b.more.L = &b.mu
	shared := newPass()
	for w := range n {
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			built := map[string]*prebuilt{}
			size := 0 // of the largest encoding yet, room for the next
			for j, ok := b.take(); ok; j, ok = b.take() {
				if p := buildAhead(st, j, shared, size); p != nil {
					built[j.name] = p
					size = max(size, len(p.runJSON))
				}
			}
			b.built[w] = built
		}()
	}
	return b
}

// add queues j for the workers.
func (b *builders) add(j aheadJob) {
	b.mu.Lock()
	b.jobs = append(b.jobs, j)
	b.mu.Unlock()
	b.more.Signal()
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
	// Grown once: appended to from empty, a 4 KB universe was copied
	// eight times as it grew.
	if b, err := unijson.Append(make([]byte, 0, size), &p.run, appendUnits(members)); err == nil {
		p.runJSON = b
	}
	return p
}
