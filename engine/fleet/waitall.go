package fleet

import (
	"context"
	"time"

	"github.com/fixpoint/fixpoint/engine/wire"
)

// waitAll serves a poll of the environments of ms until one hands out
// work or the wait ends. Each round looks at every environment in turn
// (lookAll); when none has work, the poll sleeps on the machine's shared
// signal, which a wake by any environment's controller closes, until
// then, the wait's end or the earliest time an environment said one of
// the machine's units falls due. It holds no goroutine per environment,
// and no environment hands it work it must give back for want of room.
func (f *Fleet) waitAll(ctx context.Context, machine string, max int, wait time.Duration, envs bool, ms []*member) ([]wire.Work, error) {
	now := time.Now
	if f.opts.Now != nil {
		now = f.opts.Now
	}
	deadline := now().Add(wait)
	// Open from the first look to the answer, as a controller's own
	// poll is: an agent with a poll open is alive.
	f.contacts.PollStarted(machine)
	defer func() {
		f.contacts.PollEnded(machine)
		f.contacts.Heard(machine, now())
	}()
	for {
		// Taken before the looks: a wake made after one closes it.
		sig := f.machines.Signal(machine)
		work, due, err := f.lookAll(ctx, machine, max, ms)
		if err != nil || len(work) > 0 {
			return work, err
		}
		at := now()
		if !at.Before(deadline) {
			return nil, nil
		}
		sleep := deadline.Sub(at)
		if !due.IsZero() && due.Sub(at) < sleep {
			sleep = due.Sub(at)
		}
		t := time.NewTimer(sleep) // a negative sleep fires at once
		f.machines.Sleep(machine)
		signalled := false
		select {
		case <-ctx.Done():
		case <-t.C:
		case <-sig.C():
			signalled = true
		}
		t.Stop()
		f.machines.Awake(machine, signalled)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		ms = f.order(envs)
		if signalled {
			// Let the rest of a burst land first, as a controller's
			// own poll does: the log is every environment's.
			if err := f.Default().Burst(ctx, sig.Last()); err != nil {
				return nil, err
			}
		}
	}
}

// lookAll looks at the environments of ms in order, each for what is
// left of max, and returns the work they handed out, stamped with its
// environment, and the earliest time one said a unit of machine falls
// due (zero when none did). An environment removed since the poll began
// has no work; on any other error the work taken is given back.
func (f *Fleet) lookAll(ctx context.Context, machine string, max int, ms []*member) ([]wire.Work, time.Time, error) {
	var out []wire.Work
	var next time.Time
	for _, m := range ms {
		if len(out) >= max {
			break
		}
		work, due, err := m.ctl.Look(ctx, machine, max-len(out))
		if err != nil && m.name != "" && ctx.Err() == nil && f.gone(m) {
			continue
		}
		if err != nil {
			f.giveBack(machine, out)
			return nil, time.Time{}, err
		}
		stamp(work, m)
		out = append(out, work...)
		if !due.IsZero() && (next.IsZero() || due.Before(next)) {
			next = due
		}
	}
	return out, next, nil
}

// PollStats count the polls of several environments at once, which sleep
// on their machine's shared signal: how many are asleep now and how many
// a wake woke so far. Each controller counts the polls its own wakes
// woke in its WorkStats.Wakeups.
type PollStats struct {
	Asleep, Wakeups int64
}

// Polls returns the counts of the polls of several environments.
func (f *Fleet) Polls() PollStats {
	return PollStats{Asleep: f.machines.Asleep(), Wakeups: f.machines.Wakeups()}
}
