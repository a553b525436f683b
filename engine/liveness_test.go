package engine

import (
	"context"
	"testing"
	"time"
)

// A heartbeat that changes nothing must not wake the long polls waiting on
// the controller: with a thousand agents beating every few seconds, each
// beat woke every claim and every status watcher.
func TestHeartbeatWakesOnlyWhenItDropsAClaim(t *testing.T) {
	s := newMemStore()
	shop(t, s, 1, 1)
	now := time.Unix(1_000_000, 0)
	ctl := NewController(s, Options{Window: 1, Now: func() time.Time { return now }})
	work, err := ctl.Claim(context.Background(), "m", 0, 0)
	if err != nil || len(work) == 0 {
		t.Fatalf("claim: %v, %d units", err, len(work))
	}
	ch := ctl.Changed()
	var running []string
	for _, w := range work {
		running = append(running, w.Unit)
	}
	ctl.Running("m", running)
	ctl.Touch("m")
	select {
	case <-ch:
		t.Fatal("a heartbeat naming every claimed unit woke the waiters")
	default:
	}
	// The agent no longer runs the first unit, and the claim is past its
	// grace: dropping it may let a wave move, so waiters look again.
	now = now.Add(claimGrace + time.Second)
	ctl.Running("m", running[1:])
	select {
	case <-ch:
	default:
		t.Fatal("a heartbeat that dropped a claim woke nobody")
	}
}
