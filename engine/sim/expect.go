package sim

import (
	"fmt"
	"strings"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// Expect requires every unit of the service to end with this workload
// status (and message, when given) at the fixed point: an environment
// file's expect:, or a test's own.
func (s *Service) Expect(e model.Expect) *Service {
	s.expect = &e
	return s
}

// expectations returns the services' expectations, by service.
func (e *Env) expectations() map[string]*model.Expect {
	out := map[string]*model.Expect{}
	for name, svc := range e.services {
		if svc.expect != nil {
			out[name] = svc.expect
		}
	}
	return out
}

// Unmet is a unit whose status at a fixed point is not the one its
// service's expectation names.
type Unmet struct {
	Unit string
	// Got is the unit's status at the fixed point ("active: ready",
	// or "(none)"); Want the expectation.
	Got, Want string
	// Schedules reached that fixed point.
	Schedules []int
}

// FinalStatus returns each unit's workload status at the end, by unit:
// at the fixed point most schedules reached, or, when none converged, at
// the end of the first schedule. A unit that set none has "(none)".
func (r *Report) FinalStatus() map[string]string {
	var settings map[string]string
	switch {
	case len(r.FixedPoints) > 0:
		settings = r.FixedPoints[0].Settings
	case len(r.Schedules) > 0:
		settings = r.Schedules[0].Final
	}
	out := map[string]string{}
	for _, unit := range r.units() {
		out[unit] = statusOr(settings, unit)
	}
	return out
}

// units names the units of the first schedule's end state, in order.
func (r *Report) units() []string {
	if len(r.Schedules) == 0 || r.Schedules[0].state == nil {
		return nil
	}
	return r.Schedules[0].state.SortedUnits()
}

func statusOr(settings map[string]string, unit string) string {
	if st, ok := settings[unit+" status"]; ok {
		return st
	}
	return "(none)"
}

// checkExpect holds every fixed point to the services' expectations; a
// unit is reported once, at the first fixed point it misses.
func (r *Report) checkExpect(expect map[string]*model.Expect) {
	r.Expected = len(expect) > 0
	reported := map[string]bool{}
	for _, fp := range r.FixedPoints {
		for _, unit := range r.units() {
			service, _, _ := strings.Cut(unit, "/")
			want := expect[service]
			if want == nil || reported[unit] {
				continue
			}
			got := statusOr(fp.Settings, unit)
			state, msg, _ := strings.Cut(got, ": ")
			if state == want.Status && (want.Message == nil || msg == *want.Message) {
				continue
			}
			reported[unit] = true
			r.Unmet = append(r.Unmet, &Unmet{Unit: unit, Got: got, Want: describeExpect(want), Schedules: fp.Schedules})
		}
	}
}

func describeExpect(e *model.Expect) string {
	if e.Message == nil {
		return e.Status
	}
	return charmapi.Status{State: e.Status, Message: *e.Message}.String() + fmt.Sprintf(" (message %q exactly)", *e.Message)
}

// writeFinal prints each unit's final status and, with expectations,
// which units miss theirs.
func (r *Report) writeFinal(b *strings.Builder) {
	final := r.FinalStatus()
	if len(final) == 0 {
		return
	}
	where := "at the fixed point"
	if len(r.FixedPoints) == 0 {
		where = fmt.Sprintf("at the end of schedule #%d", r.Schedules[0].Index)
	}
	fmt.Fprintf(b, "final status %s:\n", where)
	width := 0
	for _, unit := range r.units() {
		width = max(width, len(unit))
	}
	for _, unit := range r.units() {
		fmt.Fprintf(b, "  %-*s  %s\n", width, unit, final[unit])
	}
	switch {
	case len(r.Unmet) > 0:
		b.WriteString("expectations not met (expect: in the environment):\n")
		for _, u := range r.Unmet {
			fmt.Fprintf(b, "  %s ends %s; expected %s (schedules %s)\n", u.Unit, u.Got, u.Want, listInts(u.Schedules))
		}
	case r.Expected && len(r.FixedPoints) > 0:
		b.WriteString("expectations met (expect: in the environment)\n")
	}
}
