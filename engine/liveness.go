package engine

import (
	"context"
	"maps"
	"sync"
	"time"

	"github.com/fixpoint/fixpoint/model"
)

// agents is when each machine's agent was last heard and how many of its
// long polls are open: an agent waiting for work is alive, however long
// it waits. Its lock is a leaf of its own, so that an agent's call notes
// its contact, and the liveness watch reads it, without the controller's
// lock.
type agents struct {
	mu      sync.Mutex
	contact map[string]time.Time
	polling map[string]int
}

func newAgents() *agents {
	return &agents{contact: map[string]time.Time{}, polling: map[string]int{}}
}

// heard records that machine's agent was heard at.
func (a *agents) heard(machine string, at time.Time) {
	a.mu.Lock()
	a.contact[machine] = at
	a.mu.Unlock()
}

// pollStarted counts one more open long poll of machine's agent.
func (a *agents) pollStarted(machine string) {
	a.mu.Lock()
	a.polling[machine]++
	a.mu.Unlock()
}

// pollEnded counts one open long poll of machine's agent fewer.
func (a *agents) pollEnded(machine string) {
	a.mu.Lock()
	if a.polling[machine]--; a.polling[machine] <= 0 {
		delete(a.polling, machine)
	}
	a.mu.Unlock()
}

// lastHeard is when machine's agent was last heard: now while one of its
// long polls is open.
func (a *agents) lastHeard(machine string, now time.Time) time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.polling[machine] > 0 {
		return now
	}
	return a.contact[machine]
}

// WatchAgents marks machines whose agents stay silent past the TTL as lost
// (their units keep their relations, but lose leadership), and back when
// they return. Only the leader decides: isLeader gates every proposal. A
// new leader gives every agent of a machine believed alive a full TTL
// before judging it; a machine already lost stays lost until its agent
// reaches this leader, so that a leader change never hands it work.
func (c *Controller) WatchAgents(ctx context.Context, isLeader func() bool) {
	tick := time.NewTicker(c.opts.AgentTTL / 3)
	defer tick.Stop()
	var since time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if !isLeader() {
			since = time.Time{}
			continue
		}
		now := c.opts.Now()
		if since.IsZero() {
			since = now
		}
		var cur, want map[string]bool
		_ = c.store.View(func(st *model.State) error {
			cur, want = map[string]bool{}, map[string]bool{}
			for name, m := range st.Machines {
				if m.Lost {
					cur[name] = true
				}
				last := c.disp.lastHeard(name, now)
				if !m.Lost && last.Before(since) {
					last = since
				}
				if now.Sub(last) > c.opts.AgentTTL {
					want[name] = true
				}
			}
			return nil
		})
		if maps.Equal(cur, want) {
			continue
		}
		c.opts.Log.Info("agent liveness changed", "lost", want)
		if _, err := c.store.Apply(ctx, &model.Command{Op: model.OpLiveness, Time: now.UnixNano(), Liveness: &model.SetLiveness{Lost: want}}); err != nil && ctx.Err() == nil {
			c.opts.Log.Warn("record agent liveness", "error", err)
		}
	}
}

// running drops machine's claims on units other than units
// (Controller.Running).
func (d *dispatch) running(machine string, units []string) {
	d.lock()
	defer d.unlock()
	running := make(map[string]bool, len(units))
	for _, u := range units {
		running[u] = true
	}
	cutoff := d.opts.Now().Add(-claimGrace)
	dropped := false
	for name, cl := range d.claims {
		if cl.machine == machine && !running[name] && cl.at.Before(cutoff) {
			delete(d.claims, name)
			dropped = true
		}
	}
	// A heartbeat that changes nothing wakes nobody: only a dropped claim
	// can let a wave, or a unit's phase, move.
	if dropped {
		d.stat.changed.note()
		d.wakeQueued()
	}
}

// claimGrace is how long a fresh claim is safe from Running: the work may
// still be on its way to the agent, or its report on its way back.
const claimGrace = 30 * time.Second
