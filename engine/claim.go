package engine

import (
	"context"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/schedule"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// claim is a unit handed to an agent and not yet reported. It holds the
// universe handed out, which the result is checked against; claims are
// the only universes the controller holds (besides the last reconciled
// ones of often-run units), so they are bounded by the agents' free hook
// slots, which is what agents ask for.
type claim struct {
	machine string
	hash    string
	uni     *charmapi.Universe
	seen    *model.Seen
	at      time.Time // when it was handed out
	until   time.Time
	// timer marks an update-status run of a settled unit: it holds no
	// wave back and leaves the unit settled in status.
	timer bool
}

// poll is Controller.Claim: a work poll of machine's agent.
//
// Each look at the machine's work (lookLocked) is made in one pass under
// mu, batched with the looks of the polls woken with it (lookQueue). A
// sleeping poll's look is queued by the wake itself when everything in
// the log at the wake is applied (push); otherwise the woken poll first
// lets those entries land (burst).
func (d *dispatch) poll(ctx context.Context, machine string, max int, wait time.Duration) ([]wire.Work, error) {
	deadline := d.opts.Now().Add(wait)
	l := &look{machine: machine, max: max, ctx: ctx}
	defer func() {
		if !l.polling {
			// The look that found work ended the poll's count.
			return
		}
		d.lock()
		d.agents.pollEnded(machine)
		if l.parked {
			d.parked[machine]--
		}
		// A pass that could not read the store answered without
		// looking.
		d.unpush(l)
		d.agents.heard(machine, d.opts.Now())
		d.unlock()
	}()
	answered := false
	for {
		if !answered {
			d.looks.do(d, l)
		}
		answered = false
		if len(l.work) > 0 && ctx.Err() != nil {
			// The poller left before its answer: no agent gets this
			// work, so it is handed out again now rather than held
			// until a heartbeat drops it (claimGrace).
			d.giveBack(machine, l.work)
			return nil, ctx.Err()
		}
		if l.err != nil || len(l.work) > 0 {
			return l.work, l.err
		}
		now := d.opts.Now()
		if !now.Before(deadline) {
			return nil, nil
		}
		sleep := deadline.Sub(now)
		if !l.next.IsZero() && l.next.Sub(now) < sleep {
			sleep = l.next.Sub(now)
		}
		t := time.NewTimer(sleep) // a negative sleep fires at once
		// Read before sleep: once asleep, a pushed look's pass writes
		// the look.
		sig := l.sig
		d.looks.sleep(l)
		signalled := false
		select {
		case <-ctx.Done():
		case <-t.C:
		case <-sig.ch:
			signalled = true
		case <-l.done:
			// Pushed, and answered: a wake that pushed every poll of
			// the machine signals none of them.
		}
		t.Stop()
		if d.looks.awake(l, signalled) {
			// A wake pushed the look: the pass answers it as if the
			// poll had looked.
			<-l.done
			answered = true
			continue
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if signalled {
			// Let the rest of a burst land before handing work out:
			// the entries in the log when the poll was woken.
			if err := d.burst(ctx, sig.last); err != nil {
				return nil, err
			}
		}
	}
}

// claimLocked picks the units of machine that may run now and claims
// them. It also returns the earliest future retry among that machine's
// failing units.
func (d *dispatch) claimLocked(st *model.State, machine string, max int) ([]wire.Work, time.Time) {
	d.refreshLocked(st)
	now := d.opts.Now()
	if acts := d.actionWork(st, machine, max, now); len(acts) > 0 {
		// Operations first, as Juju runs a queued action before the
		// next hook; the agent asks again at once for the rest.
		return acts, time.Time{}
	}
	for {
		picked, next, changedBack := d.pick(st, machine, max, now)
		// A unit that saw a change but turned out unchanged may have
		// held the lowest wave: look again without it.
		if len(picked) > 0 || !changedBack {
			if len(picked) > 0 {
				return d.hand(st, machine, picked, now, false), next
			}
			// Nothing else to run: Juju too runs update-status only
			// on an idle unit.
			work, at := d.timerWork(st, machine, max, now)
			if !at.IsZero() && (next.IsZero() || at.Before(next)) {
				next = at
			}
			return work, next
		}
	}
}

// picked is a unit chosen to run with the universe built for it.
type picked struct {
	name string
	uni  *charmapi.Universe
	seen *model.Seen
}

// entry is what schedule.Queue.Choose needs of one unit besides the
// queue: its view and its claim. Called with mu.
func (d *dispatch) entry(name string) schedule.Entry {
	v, vs := d.stale.viewOf(name)
	if v == nil {
		return schedule.Entry{}
	}
	e := schedule.Entry{Known: true, Hash: v.hash, Machine: v.machine, Member: v.member, Moved: vs == viewHashUnknown}
	if cl := d.claims[name]; cl != nil {
		e.Claimed, e.Until, e.Timer = true, cl.until, cl.timer
	}
	return e
}

// pick chooses up to max units of machine to run now (schedule.Choose,
// answered by the queue's index at the cost of the machine's own units)
// and builds their universes, rebuilding the views of those that saw a
// change. It also returns the earliest time one of machine's queued
// units may run. changedBack says one of them turned out unchanged, so
// the wave must be looked at again. Only the units handed out have a
// universe built, so at most max are alive at once.
func (d *dispatch) pick(st *model.State, machine string, max int, now time.Time) (out []picked, next time.Time, changedBack bool) {
	choice := d.queue.Choose(st, machine, now, d.entry)
	for _, name := range choice.Run {
		if max > 0 && len(out) >= max {
			break
		}
		cur, vs := d.stale.viewOf(name)
		if vs != viewCurrent {
			var uni *charmapi.Universe
			var seen *model.Seen
			if p := d.takePrebuilt(name, ""); p != nil {
				uni, seen = d.rebuilt(st, name, p.uni, p.seen, p.hash, p.hashed)
			} else {
				uni, seen = d.rebuild(st, name)
			}
			v := d.stale.view(name)
			if ok, _ := schedule.Due(st.Units[name], v.hash, v.member, now); !ok || uni == nil {
				// It changed back: it must not hold the wave any more.
				changedBack = true
				continue
			}
			out = append(out, picked{name, uni, seen})
			continue
		}
		// The hash is current: only the content is built, and not
		// hashed again.
		if p := d.takePrebuilt(name, cur.hash); p != nil {
			d.work.Built++
			out = append(out, picked{name, p.uni, p.seen})
			continue
		}
		uni, seen := Build(st, name)
		d.work.Built++
		out = append(out, picked{name, uni, seen})
	}
	return out, choice.Next, changedBack
}

// hand claims the picked units for machine and returns their work. Each
// claim holds its universe until the result comes back. timer says they
// are update-status runs (timerWork).
func (d *dispatch) hand(st *model.State, machine string, ps []picked, now time.Time, timer bool) []wire.Work {
	work := make([]wire.Work, 0, len(ps))
	for _, p := range ps {
		v := d.stale.view(p.name)
		u := st.Units[p.name]
		var uni charmapi.Universe
		var encoded []byte
		if timer {
			uni = schedule.UpdateStatusUniverse(st, u, p.uni, v.hash, p.seen)
		} else if run, b := d.run(p.name, p.uni, v.hash); run != nil {
			uni, encoded = *run, b
		} else {
			uni = schedule.RunUniverse(st, u, p.uni, v.hash, p.seen)
		}
		ch := st.Charms[uni.Charm]
		d.claims[p.name] = &claim{machine: machine, hash: v.hash, uni: &uni, seen: p.seen, at: now, until: now.Add(d.opts.Lease),
			timer: timer || schedule.TimerRun(u, v.hash)}
		d.watchLeaseLocked(now.Add(d.opts.Lease))
		work = append(work, wire.Work{Unit: p.name, Hash: v.hash, Charm: uni.Charm, Legacy: ch != nil && ch.Legacy, Universe: &uni,
			Environment: st.Name, Principal: u.Principal, Status: &charmapi.Status{State: u.Status.State, Message: u.Status.Message}, Ports: u.Ports,
			UniverseJSON: encoded})
		if !timer {
			d.runs[p.name]++
		}
	}
	d.work.PeakClaims = max(d.work.PeakClaims, int64(len(d.claims)))
	if len(ps) > 0 {
		// Pending to reconciling: status long polls look again.
		d.stat.changed.note()
	}
	return work
}

// release gives up an agent's claims on machine (Controller.Release).
// giveBack gives back work handed to machine that never reached its agent:
// the units' claims, and the operations handed out with them.
func (d *dispatch) giveBack(machine string, work []wire.Work) {
	d.lock()
	defer d.unlock()
	for _, w := range work {
		if w.Action != nil {
			delete(d.acts.handed, w.Action.ID)
			continue
		}
		if cl := d.claims[w.Unit]; cl != nil && cl.machine == machine && cl.hash == w.Hash {
			delete(d.claims, w.Unit)
			d.claimEnded(w.Unit, machine)
		}
	}
	d.stat.changed.note()
	d.wakeQueued()
}

func (d *dispatch) release(machine string) {
	d.lock()
	defer d.unlock()
	released := false
	for name, cl := range d.claims {
		if cl.machine == machine {
			delete(d.claims, name)
			released = true
		}
	}
	if released {
		d.stat.changed.note()
	}
	d.agents.heard(machine, d.opts.Now())
	d.wakeQueued()
}
