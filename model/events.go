package model

import (
	"fmt"
	"strings"
	"time"
)

// Unit events: what happened to a unit, as `kubectl describe` lists it
// (`fixpoint events`, the end of `show-unit`, the dashboard's unit panel).
//
// The FSM derives every event from a command it applies anyway (a
// result, a resolve, liveness, a deploy, the leader elections that
// follow), so events cost no entry of their own, and every replica
// derives the same ones at the same index. Their time is the command's
// (Command.Time, the proposer's clock; a run's start is its result's
// Started), never the applying node's. Apply hands them out with its
// Response and the FSM keeps them in a Bounded store beside the state,
// in its snapshots, like the debug log (logs.go), and for the same
// reason: replicated, they survive a leader change and a restart.

// Event bounds: the memory kept per unit and in all (memcost.go counts
// it).
const (
	EventBytesPerUnit = 16 << 10
	EventBytesTotal   = 8 << 20
)

// Event kinds.
const (
	EventCreated     = "created"
	EventDying       = "dying"
	EventRemoved     = "removed"
	EventStarted     = "started"
	EventSucceeded   = "succeeded"
	EventFailed      = "failed"
	EventRetry       = "retry"
	EventDiverged    = "diverged"
	EventResolved    = "resolved"
	EventStatus      = "status"
	EventLeader      = "leader"
	EventMachineLost = "machine-lost"
	EventMachineBack = "machine-back"
)

// Event is one thing that happened to a unit.
type Event struct {
	// Seq is the event's number among all units' events.
	Seq uint64 `json:"seq,omitempty"`
	// Index is the Raft index of the command it comes from.
	Index uint64 `json:"index"`
	// Time is when it happened (unix nanoseconds), by the command's clock.
	Time int64  `json:"time"`
	Unit string `json:"unit"`
	// Env is the unit's environment, "" for the default one
	// (Cluster.Apply stamps it).
	Env     string `json:"env,omitempty"`
	Kind    string `json:"kind"`
	Message string `json:"message"`
	// Warning marks events that need attention (failures, a lost machine).
	Warning bool `json:"warning,omitempty"`
}

// NewEventStore returns the bounded store of unit events.
func NewEventStore() *Bounded[Event] {
	return NewBounded(EventBytesPerUnit, EventBytesTotal, eventSlot,
		func(e *Event) (string, int) { return e.key(), eventCost(e) },
		func(e *Event, s uint64) { e.Seq = s },
		func(e *Event) uint64 { return e.Seq }).GroupBy(EnvOfKey)
}

// EnvOfKey is the environment of a debug-log or event store key: the
// name before the first slash of a key with two ("dev/db/0"), "" (the
// default environment) for any other: a unit of the default environment,
// a machine or a node. The stores share their total cap among
// environments by it (Bounded.GroupBy), so that one environment's flood
// drops its own records before another's.
func EnvOfKey(key string) string {
	if strings.Count(key, "/") != 2 {
		return ""
	}
	env, _, _ := strings.Cut(key, "/")
	return env
}

// key is what the store bounds the event's unit by: its name, prefixed by
// its environment's outside the default one ("dev/db/0": a unit name has
// one slash, so no default unit's key is one of them).
func (e *Event) key() string {
	if e.Env == "" {
		return e.Unit
	}
	return e.Env + "/" + e.Unit
}

// Events returns the events the last successful Apply derived, in order.
func (r *Response) Events() []Event { return r.events }

// note records an event of unit at the applying command's time.
func (s *applying) note(unit, kind string, warning bool, format string, args ...any) {
	s.noteAt(s.now, unit, kind, warning, format, args...)
}

func (s *applying) noteAt(at int64, unit, kind string, warning bool, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.pending = append(s.pending, Event{Index: s.Index, Time: at, Unit: unit, Kind: kind, Message: Truncate(msg, 1024), Warning: warning})
}

// noteResult records what a run's result did to u: started, succeeded or
// failed (with the retry's delay), a new workload status. A successful
// update-status run that changed nothing is not an event: a settled unit
// is woken every few minutes.
func (s *applying) noteResult(u *Unit, r *Result, wasError *UnitError, oldStatus Status) {
	if r.Error != "" {
		if r.Started > 0 {
			s.noteAt(r.Started, u.Name, EventStarted, false, "hook run started on universe %s", ShortHash(r.Hash))
		}
		s.note(u.Name, EventFailed, true, "hook failed (attempt %d): %s", u.Error.Attempts, r.Error)
		if r.RetryAt > 0 {
			d := time.Duration(r.RetryAt - s.now).Round(time.Second)
			s.note(u.Name, EventRetry, false, "retrying in %s (attempt %d)", max(d, 0), u.Error.Attempts+1)
		}
		return
	}
	if _, kept := s.Units[u.Name]; !kept {
		return // its last run: removed says it all
	}
	statusMoved := u.Status != oldStatus
	if r.Timer && wasError == nil && !statusMoved && u.Error == nil {
		return
	}
	if r.Started > 0 {
		s.noteAt(r.Started, u.Name, EventStarted, false, "hook run started on universe %s", ShortHash(r.Hash))
	}
	switch {
	case wasError != nil:
		s.note(u.Name, EventSucceeded, false, "hook succeeded after %d failed attempt(s); out of error", wasError.Attempts)
	default:
		s.note(u.Name, EventSucceeded, false, "hook succeeded")
	}
	if statusMoved {
		msg := u.Status.State
		if u.Status.Message != "" {
			msg += ": " + u.Status.Message
		}
		s.note(u.Name, EventStatus, u.Status.State == "blocked", "workload status %s", msg)
	}
	if u.Error != nil && u.Error.Kind == ErrDiverged {
		s.note(u.Name, EventDiverged, true, "%s", u.Error.Message)
	}
}

// noteLeader records a change of svc's leader.
func (s *applying) noteLeader(svc, old, next string) {
	if old != "" {
		if _, ok := s.Units[old]; ok {
			s.note(old, EventLeader, false, "no longer the leader of %s (now %s)", svc, orNone(next))
		}
	}
	if next != "" {
		s.note(next, EventLeader, false, "elected leader of %s", svc)
	}
}

// noteLiveness records a machine lost or back on each of its units.
func (s *applying) noteLiveness(m *Machine) {
	for _, name := range sortedKeys(s.Units) {
		if u := s.Units[name]; u.Machine == m.Name {
			if m.Lost {
				s.note(name, EventMachineLost, true, "machine %s lost: its agent stopped answering", m.Name)
			} else {
				s.note(name, EventMachineBack, false, "machine %s back: its agent answers again", m.Name)
			}
		}
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
