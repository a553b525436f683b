package legacy

import (
	"fmt"
	"maps"
	"slices"

	"github.com/fixpoint/fixpoint/charmapi"
)

// hookWrites are what the run's hooks wrote, as the hooks read it back
// over the inputs and as the result carries it. The tools that change it,
// or read it back, reading at most the inputs beside it, are its methods.
type hookWrites struct {
	local         map[string]map[string]string // ident → resulting own bag, once written
	app           map[string]map[string]string // ident → resulting service bag, once written
	leaderData    map[string]string            // resulting leader data, once written
	status        *charmapi.Status             // current, for status-get
	statusWritten bool                         // status-set was called: status goes in the result
	appStatus     *charmapi.Status
	ports         map[string]bool
	portsWritten  bool
	// state is the unit's private map with this call's writes
	// (application status and version live there: the result has no
	// field of its own for them); stateWritten says a tool wrote it.
	state        map[string]string
	stateWritten bool
	// storageAsked is what storage-add asked for, per store.
	storageAsked map[string]int
	// boot is what juju-reboot asked (tools_reboot.go).
	boot reboot
}

// write applies settings to a bag copy-on-write: an empty value deletes,
// as relation-set and leader-set do in Juju.
func write(cur map[string]string, settings map[string]string) map[string]string {
	out := maps.Clone(cur)
	if out == nil {
		out = map[string]string{}
	}
	for k, v := range settings {
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// writesTool runs a hook tool that reads and writes only the hooks'
// writes.
func writesTool(run func(w *hookWrites, c *call) (any, error)) func(s *session, c *call) (any, error) {
	return func(s *session, c *call) (any, error) { return run(&s.writes, c) }
}

// writesOverInputsTool runs a hook tool that reads and writes the hooks'
// writes, reading the run's inputs beneath them.
func writesOverInputsTool(run func(w *hookWrites, in *inputs, c *call) (any, error)) func(s *session, c *call) (any, error) {
	return func(s *session, c *call) (any, error) { return run(&s.writes, &s.in, c) }
}

// newHookWrites starts from the unit's private state, its current status
// and its open ports.
func newHookWrites(state map[string]string, status *charmapi.Status, ports []string) (hookWrites, error) {
	w := hookWrites{
		local: map[string]map[string]string{},
		app:   map[string]map[string]string{},
		ports: map[string]bool{},
		state: state,
	}
	if status != nil {
		st := *status
		w.status = &st
	}
	for _, p := range ports {
		norm, err := parseEntry(p)
		if err != nil {
			return hookWrites{}, fmt.Errorf("current ports: %w", err)
		}
		w.ports[norm] = true
	}
	return w, nil
}

// result is what the hooks wrote, in the reconcile result's terms: every
// relation written is listed with its whole resulting bag (a listed bag
// replaces the stored one), leader data and ports likewise, status as
// last set. The unit's private state is listed whole once a tool wrote it
// (state-set, status-set --application, application-version-set).
func (w *hookWrites) result() *charmapi.Result {
	res := &charmapi.Result{}
	for _, ident := range slices.Sorted(maps.Keys(w.local)) {
		res.SetLocal(ident, maps.Clone(w.local[ident]))
	}
	for _, ident := range slices.Sorted(maps.Keys(w.app)) {
		res.SetApp(ident, maps.Clone(w.app[ident]))
	}
	if w.leaderData != nil {
		res.LeaderData = maps.Clone(w.leaderData)
	}
	if w.status != nil && w.statusWritten {
		st := *w.status
		res.Status = &st
	}
	if w.portsWritten {
		res.Ports = sortPorts(w.ports)
	}
	if w.stateWritten {
		res.State = maps.Clone(w.state)
	}
	if len(w.storageAsked) > 0 {
		res.StorageAdd = maps.Clone(w.storageAsked)
	}
	res.Reboot = w.boot.asked
	return res
}

// localBag is the unit's own settings in ident, with its writes.
func (w *hookWrites) localBag(in *inputs, ident string) map[string]string {
	if b, ok := w.local[ident]; ok {
		return b
	}
	if r, ok := in.rels[ident]; ok {
		return r.Local
	}
	// A relation the unit is leaving: its own data while it is still in
	// it, as Juju's relation-get answers in -departed and -broken.
	return in.u.Leaving[ident]
}

// appBag is the unit's own service's bag in ident, with its writes.
func (w *hookWrites) appBag(in *inputs, ident string) map[string]string {
	if b, ok := w.app[ident]; ok {
		return b
	}
	if r, ok := in.rels[ident]; ok {
		return r.App
	}
	return nil
}

// currentLeaderData is the service's leader data with this unit's writes.
func (w *hookWrites) currentLeaderData(in *inputs) map[string]string {
	if w.leaderData != nil {
		return w.leaderData
	}
	return in.u.LeaderData
}
