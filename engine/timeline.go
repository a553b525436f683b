package engine

import (
	"sync"
	"time"
)

// TimelineLimit bounds the samples a Timeline keeps: past it the series
// is thinned to every other sample, so that it spans the whole time since
// the last apply at a coarser step.
const TimelineLimit = 480

// timelineStep is the least time between two kept samples of a fresh
// series; every thinning doubles it.
const timelineStep = 100 * time.Millisecond

// Sample is the units per phase status showed at one time, at one index.
type Sample struct {
	Time  time.Time `json:"time"`
	Index uint64    `json:"index"`
	PhaseCounts
}

// Timeline is how convergence progressed since the last apply: the units
// per phase each time what status shows moved, as the leader counted
// them. It lives in the leader's memory: a new leader starts a series of
// its own, and an apply (a new model.State.EnvIndex) starts it over.
type Timeline struct {
	// EnvIndex is the index of the apply the series follows.
	EnvIndex uint64 `json:"env_index"`
	// Start is when this node first counted the units after that apply.
	Start time.Time `json:"start"`
	// StepMillis is the least time between two samples but the last:
	// samples closer than that replace the last one.
	StepMillis int64 `json:"step_ms"`
	// Samples are in time order, each with counts unlike the one before;
	// the last holds until now.
	Samples []Sample `json:"samples"`
}

// timeline keeps a Timeline, under a lock of its own: a leaf, taken
// under statusState.mu by a summary and alone by Timeline.
type timeline struct {
	mu      sync.Mutex
	env     uint64
	start   time.Time
	step    time.Duration
	samples []Sample
}

// record adds the counts p seen at index and now after the apply at env.
func (t *timeline) record(env, index uint64, now time.Time, p PhaseCounts) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.start.IsZero() || env != t.env {
		t.env, t.start, t.step, t.samples = env, now, timelineStep, nil
	}
	n := len(t.samples)
	if n > 0 && t.samples[n-1].PhaseCounts == p {
		return
	}
	s := Sample{Time: now, Index: index, PhaseCounts: p}
	if n >= 2 && t.samples[n-1].Time.Sub(t.samples[n-2].Time) < t.step {
		// The last sample came too soon after the one before: it only
		// stood for the latest counts, which these replace.
		t.samples[n-1] = s
		return
	}
	if n >= TimelineLimit {
		t.thin()
	}
	t.samples = append(t.samples, s)
}

// thin keeps the first sample, every other one after it and the last,
// and doubles the step.
func (t *timeline) thin() {
	n := len(t.samples)
	kept := t.samples[:1]
	for i := 2; i < n-1; i += 2 {
		kept = append(kept, t.samples[i])
	}
	kept = append(kept, t.samples[n-1])
	clear(t.samples[len(kept):])
	t.samples = kept
	t.step *= 2
}

// snapshot is a copy of the series.
func (t *timeline) snapshot() *Timeline {
	t.mu.Lock()
	defer t.mu.Unlock()
	return &Timeline{EnvIndex: t.env, Start: t.start, StepMillis: t.step.Milliseconds(), Samples: append([]Sample{}, t.samples...)}
}
