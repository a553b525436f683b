package raftstore

import (
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// contacts keeps, on the leader, the followers that stopped answering its
// heartbeats and when each last answered, as raft's replication saw it
// (FailedHeartbeatObservation); a follower that answers again
// (ResumedHeartbeatObservation), leaves the configuration, or a change of
// leader takes it out. A gone node's own status cannot say how long it
// has been gone: only the leader knows.
type contacts struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// observe records one observation of raft's.
func (c *contacts) observe(o raft.Observation) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch d := o.Data.(type) {
	case raft.FailedHeartbeatObservation:
		if c.last == nil {
			c.last = map[string]time.Time{}
		}
		c.last[string(d.PeerID)] = d.LastContact
	case raft.ResumedHeartbeatObservation:
		delete(c.last, string(d.PeerID))
	case raft.PeerObservation:
		if d.Removed {
			delete(c.last, string(d.Peer.ID))
		}
	case raft.LeaderObservation:
		// A new leader's replication starts afresh, and says again
		// who does not answer it.
		c.last = nil
	}
}

// silentSince lists the followers silent for longer than quiet, with when
// each last answered: a heartbeat or two lost to a busy moment is no
// gone node.
func (c *contacts) silentSince(now time.Time, quiet time.Duration) map[string]time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out map[string]time.Time
	for id, t := range c.last {
		if now.Sub(t) > quiet {
			if out == nil {
				out = map[string]time.Time{}
			}
			out[id] = t
		}
	}
	return out
}

// watchContacts follows raft's heartbeat observations into s.contacts
// until the store closes. Raft drops observations a full channel cannot
// take; a follower that stays gone fails every heartbeat, so the next
// failure is recorded.
func (s *Store) watchContacts() {
	ch := make(chan raft.Observation, 64)
	obs := raft.NewObserver(ch, false, func(o *raft.Observation) bool {
		switch o.Data.(type) {
		case raft.FailedHeartbeatObservation, raft.ResumedHeartbeatObservation, raft.PeerObservation, raft.LeaderObservation:
			return true
		}
		return false
	})
	s.raft.RegisterObserver(obs)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.raft.DeregisterObserver(obs)
		for {
			select {
			case <-s.ctx.Done():
				return
			case o := <-ch:
				s.contacts.observe(o)
			}
		}
	}()
}

// Unreachable lists, on the leader, the servers that have not answered its
// heartbeats for longer than the heartbeat timeout, with when each last
// did (at the latest when this node became leader); nil on a follower,
// which cannot tell.
func (s *Store) Unreachable() map[string]time.Time {
	if !s.IsLeader() {
		return nil
	}
	return s.contacts.silentSince(time.Now(), s.raft.ReloadableConfig().HeartbeatTimeout)
}
