package legacy

import (
	"strings"

	"github.com/fixpoint/fixpoint/charmapi"
)

// What Juju's uniter does around each hook, whether the charm has the hook
// or not: the unit's view of each relation's membership and the workload
// status the uniter sets on the charm's behalf.

// Juju's hook kinds the uniter acts on around a hook.
const (
	hookInstall       = "install"
	hookStart         = "start"
	hookStop          = "stop"
	hookRemove        = "remove"
	suffixRelJoined   = "-relation-joined"
	suffixRelDeparted = "-relation-departed"
)

// The status Juju's uniter gives a unit whose charm has not set one: while
// it installs (status.MessageInstallingCharm), and once it has started.
var (
	statusInstalling = charmapi.Status{State: "maintenance", Message: "installing charm software"}
	statusUnknown    = charmapi.Status{State: "unknown"}
)

// The status Juju's uniter sets before a dying unit's stop and remove
// hooks, whatever the charm set (operation/runhook.go, beforeHook): the
// hooks' status-get answers it, and a status-set in the hook replaces
// it. Juju's "terminated" after remove has no counterpart: the unit is
// gone from the state once its remove has run.
var (
	statusStopping = charmapi.Status{State: "maintenance", Message: "stopping charm software"}
	statusCleaning = charmapi.Status{State: "maintenance", Message: "cleaning up prior to charm deletion"}
)

// initialMembers is each relation's membership as the unit saw it before
// the call's first hook: the members now, less those whose -relation-joined
// is still to run, plus those whose -relation-departed is (Juju's
// relationer counts a unit a member from the commit of its joined hook to
// the commit of its departed hook).
func initialMembers(rels map[string]*charmapi.Relation, evs []charmapi.Event) map[string]map[string]bool {
	m := make(map[string]map[string]bool, len(rels))
	for ident, r := range rels {
		set := make(map[string]bool, len(r.Units))
		for u := range r.Units {
			set[u] = true
		}
		m[ident] = set
	}
	for _, ev := range evs {
		if ev.Relation == "" || ev.RemoteUnit == "" {
			continue
		}
		set := m[ev.Relation]
		if set == nil {
			set = map[string]bool{}
			m[ev.Relation] = set
		}
		switch {
		case strings.HasSuffix(ev.Hook, suffixRelJoined):
			delete(set, ev.RemoteUnit)
		case strings.HasSuffix(ev.Hook, suffixRelDeparted):
			set[ev.RemoteUnit] = true
		}
	}
	return m
}

// before is what Juju's uniter does before ev's hook runs, or would run
// had the charm one: before install, a unit whose charm has set no status
// is "installing charm software"; before stop and remove, a dying unit is
// in maintenance, stopping then cleaning up (a unit whose machine
// rebooted keeps its status through its stop).
func (s *session) before(ev charmapi.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case ev.Hook == hookInstall && !s.writes.statusWritten:
		st := statusInstalling
		s.writes.status = &st
		s.gen++
	case ev.Hook == hookStop && s.in.u.Life != "alive":
		st := statusStopping
		s.writes.status, s.writes.statusWritten = &st, true
		s.gen++
	case ev.Hook == hookRemove:
		st := statusCleaning
		s.writes.status, s.writes.statusWritten = &st, true
		s.gen++
	}
}

// after is what Juju's uniter commits once ev's hook has succeeded or been
// skipped: a joined unit becomes a member and a departed one stops being
// one; a unit whose charm has set no status by the end of start has status
// "unknown", which the result carries.
func (s *session) after(ev charmapi.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if set := s.members[ev.Relation]; set != nil && ev.RemoteUnit != "" {
		switch {
		case strings.HasSuffix(ev.Hook, suffixRelJoined):
			set[ev.RemoteUnit] = true
		case strings.HasSuffix(ev.Hook, suffixRelDeparted):
			delete(set, ev.RemoteUnit)
		}
	}
	if ev.Hook == hookStart && !s.writes.statusWritten {
		st := statusUnknown
		s.writes.status, s.writes.statusWritten = &st, true
		s.gen++
	}
}

// remoteUnits lists the remote members of ident as the running hook sees
// them, sorted as the model sorts units: the unit's view of the relation,
// with the hook's own remote unit in it, except in its departed hook (as
// Juju's context adds the remote unit to the relation's members, or
// removes the departing one, when it builds the hook's context).
func (s *session) remoteUnits(ident string, ev charmapi.Event) []string {
	set := s.members[ident]
	hookUnit := ""
	departing := false
	if ev.Relation == ident {
		hookUnit, departing = ev.RemoteUnit, strings.HasSuffix(ev.Hook, suffixRelDeparted)
	}
	out := make([]string, 0, len(set)+1)
	for u := range set {
		if !departing || u != hookUnit {
			out = append(out, u)
		}
	}
	if hookUnit != "" && !departing && !set[hookUnit] {
		out = append(out, hookUnit)
	}
	charmapi.SortUnits(out)
	return out
}
