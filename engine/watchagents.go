package engine

import (
	"context"
	"maps"
	"time"

	"github.com/fixpoint/fixpoint/model"
)

// watchAgents marks machines whose agents stay silent past the TTL as lost
// (their units keep their relations, but lose leadership), and back when
// they return. Only the leader decides: isLeader gates every proposal. A
// new leader gives every agent of a machine believed alive a full TTL
// before judging it; a machine already lost stays lost until its agent
// reaches this leader, so that a leader change never hands it work.
func (h *handout) watchAgents(ctx context.Context, isLeader func() bool) {
	tick := time.NewTicker(h.opts.AgentTTL / 3)
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
		now := h.opts.Now()
		if since.IsZero() {
			since = now
		}
		var cur, want map[string]bool
		_ = h.store.View(func(st *model.State) error {
			cur, want = map[string]bool{}, map[string]bool{}
			for name, m := range st.Machines {
				if m.Lost {
					cur[name] = true
				}
				last := h.contacts.LastHeard(name, now)
				if !m.Lost && last.Before(since) {
					last = since
				}
				if now.Sub(last) > h.opts.AgentTTL {
					want[name] = true
				}
			}
			return nil
		})
		if maps.Equal(cur, want) {
			continue
		}
		h.opts.Log.Info("agent liveness changed", "lost", want)
		if _, err := h.store.Apply(ctx, &model.Command{Op: model.OpLiveness, Time: now.UnixNano(), Liveness: &model.SetLiveness{Lost: want}}); err != nil && ctx.Err() == nil {
			h.opts.Log.Warn("record agent liveness", "error", err)
		}
	}
}
