package liveness

import (
	"testing"
	"time"
)

// An agent is last heard when it last called, or now while one of its
// long polls is open, however long that poll has waited.
func TestAgentsAreHeardWhileTheyPoll(t *testing.T) {
	a := New()
	t0 := time.Unix(1000, 0)
	now := t0.Add(time.Hour)
	if got := a.LastHeard("m", now); !got.IsZero() {
		t.Fatalf("a machine never heard was last heard at %v", got)
	}
	a.Heard("m", t0)
	if got := a.LastHeard("m", now); !got.Equal(t0) {
		t.Fatalf("last heard %v, want its call at %v", got, t0)
	}
	a.PollStarted("m")
	a.PollStarted("m")
	a.PollEnded("m")
	if got := a.LastHeard("m", now); !got.Equal(now) {
		t.Fatalf("with a poll open, last heard %v, want now (%v)", got, now)
	}
	a.PollEnded("m")
	if got := a.LastHeard("m", now); !got.Equal(t0) {
		t.Fatalf("with every poll ended, last heard %v, want its call at %v", got, t0)
	}
}
