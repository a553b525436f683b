package charmapi

import (
	"fmt"
	"slices"
)

// Bag is a settings map that can be filled by chained Set calls. The bags
// returned by Result.Local, Result.App, Result.LeaderSettings and
// Result.PrivateState are the result's own maps: setting a key in them
// sets it in the result.
type Bag map[string]string

// Set sets key to value and returns the bag, for chaining. An empty key
// is a bad result (the engine says which field); an empty value is kept
// as an empty string.
func (b Bag) Set(key, value string) Bag {
	b[key] = value
	return b
}

// Setf sets key to a formatted value.
func (b Bag) Setf(key, format string, args ...any) Bag {
	b[key] = fmt.Sprintf(format, args...)
	return b
}

// Local returns this unit's settings in relation ident as a bag to fill.
// Calling it lists the relation in the result, so the unit's settings
// there are replaced whole by the bag: keys not set are removed. A hook
// should therefore write every key it means to keep, each time; that is
// what makes its output a function of the universe alone.
func (r *Result) Local(ident string) Bag {
	rr := r.relation(ident)
	if rr.Local == nil {
		rr.Local = map[string]string{}
		r.Relations[ident] = rr
	}
	return Bag(rr.Local)
}

// App returns the service's application bag in relation ident, to fill.
// Only the leader may write it; a result from another unit that sets it
// is refused as a whole. Like Local, the bag replaces the old one whole.
func (r *Result) App(ident string) Bag {
	rr := r.relation(ident)
	if rr.App == nil {
		rr.App = map[string]string{}
		r.Relations[ident] = rr
	}
	return Bag(rr.App)
}

func (r *Result) relation(ident string) RelationResult {
	if r.Relations == nil {
		r.Relations = map[string]RelationResult{}
	}
	return r.Relations[ident]
}

// LeaderSettings returns the service's leader data, to fill; it replaces
// the old leader data whole. Leader only.
func (r *Result) LeaderSettings() Bag {
	if r.LeaderData == nil {
		r.LeaderData = map[string]string{}
	}
	return Bag(r.LeaderData)
}

// PrivateState returns the unit's private map, to fill; it replaces the
// old one whole and comes back as Universe.State on the next run. Keep
// derived values out of it: anything here that changes on every run
// changes nothing for other units, but it hides non-determinism.
func (r *Result) PrivateState() Bag {
	if r.State == nil {
		r.State = map[string]string{}
	}
	return Bag(r.State)
}

// OpenPort adds ports ("80/tcp", "53/udp", "8000-8080/tcp" or "icmp") to
// the unit's open ports. Once OpenPort or ClosePorts is called the result
// lists the unit's ports whole: ports not opened in this result close.
func (r *Result) OpenPort(ports ...string) *Result {
	if r.Ports == nil {
		r.Ports = []string{}
	}
	for _, p := range ports {
		if !slices.Contains(r.Ports, p) {
			r.Ports = append(r.Ports, p)
		}
	}
	slices.Sort(r.Ports)
	return r
}

// ClosePorts makes the result close every port the unit has open, unless
// OpenPort adds some after it.
func (r *Result) ClosePorts() *Result {
	r.Ports = []string{}
	return r
}

// Activef, Blockedf, Waitingf and Maintenancef set the workload status
// with a formatted message.
func (r *Result) Activef(format string, args ...any) *Result {
	return r.Active(fmt.Sprintf(format, args...))
}

// Blockedf sets a blocked status: the unit needs an operator (a missing
// relation, a bad config value). Say what to do in the message.
func (r *Result) Blockedf(format string, args ...any) *Result {
	return r.Blocked(fmt.Sprintf(format, args...))
}

// Waitingf sets a waiting status: the unit waits for another unit, and
// will move on by itself when that unit's settings arrive.
func (r *Result) Waitingf(format string, args ...any) *Result {
	return r.Waiting(fmt.Sprintf(format, args...))
}

// Maintenancef sets a maintenance status: the unit is busy with itself.
func (r *Result) Maintenancef(format string, args ...any) *Result {
	return r.Maintenance(fmt.Sprintf(format, args...))
}

// Status states, in increasing severity as Raise orders them.
const (
	StatusActive      = "active"
	StatusWaiting     = "waiting"
	StatusMaintenance = "maintenance"
	StatusBlocked     = "blocked"
)

var severity = map[string]int{StatusActive: 1, StatusWaiting: 2, StatusMaintenance: 3, StatusBlocked: 4}

// Raise sets the status to state and msg unless the result already has a
// status at least as severe (blocked > maintenance > waiting > active, as
// Juju ranks them). A hook that checks several things can Raise at each
// and report the worst; among equals, the first message stays.
func (r *Result) Raise(state, msg string) *Result {
	if r.Status == nil || severity[state] > severity[r.Status.State] {
		r.Status = &Status{State: state, Message: msg}
	}
	return r
}

// String prints a status as "state: message", or just the state.
func (s Status) String() string {
	if s.Message == "" {
		return s.State
	}
	return s.State + ": " + s.Message
}
