package engine

import (
	"context"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/schedule"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/wire"
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

// Claim waits up to wait for stale units on machine, claims them for the
// caller and returns them. It returns no work, and no error, when the wait
// ends first.
//
// Each look at the machine's work (lookLocked) is made in one pass under
// the controller's lock, batched with the looks of the polls woken with
// it (lookQueue). A sleeping poll's look is queued by the wake itself
// when everything in the log at the wake is applied (push); otherwise
// the woken poll first lets those entries land (burst).
func (c *Controller) Claim(ctx context.Context, machine string, max int, wait time.Duration) ([]wire.Work, error) {
	deadline := c.opts.Now().Add(wait)
	l := &look{machine: machine, max: max, ctx: ctx}
	defer func() {
		if !l.polling {
			// The look that found work ended the poll's count.
			return
		}
		c.mu.Lock()
		c.disp.agents.pollEnded(machine)
		if l.parked {
			c.disp.parked[machine]--
		}
		// A pass that could not read the store answered without
		// looking.
		c.unpush(l)
		c.disp.agents.heard(machine, c.opts.Now())
		c.mu.Unlock()
	}()
	answered := false
	for {
		if !answered {
			c.disp.looks.do(c, l)
		}
		answered = false
		if l.err != nil || len(l.work) > 0 {
			return l.work, l.err
		}
		now := c.opts.Now()
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
		c.disp.looks.sleep(l)
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
		if c.disp.looks.awake(l, signalled) {
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
			if err := c.burst(ctx, sig.last); err != nil {
				return nil, err
			}
		}
	}
}

// claimLocked picks the units of machine that may run now and claims
// them. It also returns the earliest future retry among that machine's
// failing units.
func (c *Controller) claimLocked(st *model.State, machine string, max int) ([]wire.Work, time.Time) {
	c.refreshLocked(st)
	now := c.opts.Now()
	if acts := c.actionWork(st, machine, max, now); len(acts) > 0 {
		// Operations first, as Juju runs a queued action before the
		// next hook; the agent asks again at once for the rest.
		return acts, time.Time{}
	}
	for {
		picked, next, changedBack := c.pick(st, machine, max, now)
		// A unit that saw a change but turned out unchanged may have
		// held the lowest wave: look again without it.
		if len(picked) > 0 || !changedBack {
			if len(picked) > 0 {
				return c.hand(st, machine, picked, now, false), next
			}
			// Nothing else to run: Juju too runs update-status only
			// on an idle unit.
			work, at := c.timerWork(st, machine, max, now)
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
func (c *Controller) entry(name string) schedule.Entry {
	v := c.stale.view(name)
	if v == nil {
		return schedule.Entry{}
	}
	e := schedule.Entry{Known: true, Hash: v.hash, Machine: v.machine, Member: v.member, Moved: c.stale.behind(name) == viewHashUnknown}
	if cl := c.disp.claims[name]; cl != nil {
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
func (c *Controller) pick(st *model.State, machine string, max int, now time.Time) (out []picked, next time.Time, changedBack bool) {
	choice := c.disp.queue.Choose(st, machine, now, c.entry)
	for _, name := range choice.Run {
		if max > 0 && len(out) >= max {
			break
		}
		if c.stale.behind(name) != viewCurrent {
			var uni *charmapi.Universe
			var seen *model.Seen
			if p := c.takePrebuilt(name, ""); p != nil {
				uni, seen = c.rebuilt(st, name, p.uni, p.seen, p.hash, p.hashed)
			} else {
				uni, seen = c.rebuild(st, name)
			}
			v := c.stale.view(name)
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
		if p := c.takePrebuilt(name, c.stale.view(name).hash); p != nil {
			c.work.Built++
			out = append(out, picked{name, p.uni, p.seen})
			continue
		}
		uni, seen := Build(st, name)
		c.work.Built++
		out = append(out, picked{name, uni, seen})
	}
	return out, choice.Next, changedBack
}

// hand claims the picked units for machine and returns their work. Each
// claim holds its universe until the result comes back. timer says they
// are update-status runs (timerWork).
func (c *Controller) hand(st *model.State, machine string, ps []picked, now time.Time, timer bool) []wire.Work {
	work := make([]wire.Work, 0, len(ps))
	for _, p := range ps {
		v := c.stale.view(p.name)
		u := st.Units[p.name]
		var uni charmapi.Universe
		var encoded []byte
		if timer {
			uni = schedule.UpdateStatusUniverse(st, u, p.uni, v.hash, p.seen)
		} else if run, b := c.disp.looks.run(p.name, p.uni, v.hash); run != nil {
			uni, encoded = *run, b
		} else {
			uni = schedule.RunUniverse(st, u, p.uni, v.hash, p.seen)
		}
		ch := st.Charms[uni.Charm]
		c.disp.claims[p.name] = &claim{machine: machine, hash: v.hash, uni: &uni, seen: p.seen, at: now, until: now.Add(c.opts.Lease),
			timer: timer || schedule.TimerRun(u, v.hash)}
		c.watchLeaseLocked(now.Add(c.opts.Lease))
		work = append(work, wire.Work{Unit: p.name, Hash: v.hash, Charm: uni.Charm, Legacy: ch != nil && ch.Legacy, Universe: &uni,
			Environment: st.Name, Principal: u.Principal, Status: &charmapi.Status{State: u.Status.State, Message: u.Status.Message}, Ports: u.Ports,
			UniverseJSON: encoded})
		if !timer {
			c.disp.runs[p.name]++
		}
	}
	c.work.PeakClaims = max(c.work.PeakClaims, int64(len(c.disp.claims)))
	if len(ps) > 0 {
		// Pending to reconciling: status long polls look again.
		c.stat.changed.note()
	}
	return work
}

// Release gives up an agent's claims on machine, e.g. when it restarts.
func (c *Controller) Release(machine string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	released := false
	for name, cl := range c.disp.claims {
		if cl.machine == machine {
			delete(c.disp.claims, name)
			released = true
		}
	}
	if released {
		c.stat.changed.note()
	}
	c.disp.agents.heard(machine, c.opts.Now())
	c.wakeQueued()
}
