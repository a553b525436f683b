package raftstore

import (
	"fmt"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// A follower that is gone shows, from any node, as unreachable with the
// leader's account of its last contact, which grows as it stays gone,
// not as "0s".
func TestGoneMemberHasItsRealLastContact(t *testing.T) {
	log := testLogger(t)
	ctx := ctxT(t, 90*time.Second)
	nodes := []*node{newNode(t, log, "n1"), newNode(t, log, "n2"), newNode(t, log, "n3")}
	nodes[0].start(true, nil)
	nodes[1].start(false, []string{nodes[0].httpAddr})
	nodes[2].start(false, []string{nodes[0].httpAddr})
	rafttest.Eventually(t, time.Minute, "three voters", func() error { return voters(nodes, 3) })
	leader := waitLeader(t, nodes...)
	followers := others(nodes, leader)
	gone, asked := followers[0], followers[1]
	if len(leader.s.Unreachable()) != 0 {
		t.Fatalf("unreachable with every node up: %v", leader.s.Unreachable())
	}
	gone.stop()
	stopped := time.Now()

	var first time.Duration
	rafttest.Eventually(t, time.Minute, gone.id+" unreachable with a last contact", func() error {
		if _, ok := leader.s.Unreachable()[gone.id]; !ok {
			return fmt.Errorf("the leader's unreachable: %v", leader.s.Unreachable())
		}
		before := time.Now()
		ms, err := asked.s.Members(ctx)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if m.ID != gone.id {
				if m.Unreachable {
					return fmt.Errorf("%s is up but unreachable: %+v", m.ID, ms)
				}
				continue
			}
			// It last answered about when it stopped (its connections
			// may outlive its store by a heartbeat or so).
			gone := before.Sub(stopped)
			if !m.Unreachable || m.Role != "unknown" || gone < 2*time.Second || m.LastContact < gone-time.Second {
				return fmt.Errorf("gone member %+v, want unreachable, last contact >= %s", m, gone-time.Second)
			}
			first = m.LastContact
			return nil
		}
		return fmt.Errorf("%s not a member: %+v", gone.id, ms)
	})
	rafttest.Eventually(t, time.Minute, "its last contact growing", func() error {
		ms, err := leader.s.Members(ctx)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if m.ID == gone.id && m.LastContact > first {
				return nil
			}
		}
		return fmt.Errorf("members %+v, want %s's last contact past %s", ms, gone.id, first)
	})
	if asked.s.Unreachable() != nil {
		t.Fatalf("a follower claims to know who is unreachable: %v", asked.s.Unreachable())
	}

	// Back: reachable again, from the leader's account too.
	gone.start(false, nil)
	rafttest.Eventually(t, time.Minute, gone.id+" back", func() error {
		if u := leader.s.Unreachable(); len(u) != 0 {
			return fmt.Errorf("unreachable: %v", u)
		}
		return nil
	})
}
