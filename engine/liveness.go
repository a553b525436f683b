package engine

import (
	"context"
	"maps"
	"time"

	"github.com/fixpoint/fixpoint/model"
)

// Touch records that machine's agent is alive.
func (c *Controller) Touch(machine string) {
	c.mu.Lock()
	c.contact[machine] = c.opts.Now()
	c.mu.Unlock()
}

// WatchAgents marks machines whose agents stay silent past the TTL as lost
// (their units keep their relations, but lose leadership), and back when
// they return. Only the leader decides: isLeader gates every proposal, and
// a new leader gives every agent a full TTL before judging it.
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
			c.mu.Lock()
			defer c.mu.Unlock()
			cur, want = map[string]bool{}, map[string]bool{}
			for name, m := range st.Machines {
				if m.Lost {
					cur[name] = true
				}
				last := c.contact[name]
				if c.polling[name] > 0 {
					last = now
				}
				if last.Before(since) {
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
