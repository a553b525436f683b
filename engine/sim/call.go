package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/schedule"
	"github.com/fixpoint/fixpoint/model"
)

// callRecord is one hook run, for the check that hooks are functions of
// their universe.
type callRecord struct {
	unit, in, out string
	result        map[string]string
	// own is what the universe showed of the unit's own data, keyed as
	// result is (relations.db:1.local.k, relations.peers:0.app.k,
	// leader_data.k, state.k): what a hook that reads a value back finds.
	own map[string]string
	// check marks a run made only to see whether the unit reads back what
	// it wrote (checkRuns); its result was not applied.
	check bool
}

// prepared is one hook run set up as an agent would: the universe it is
// given (a copy nobody else holds), its hash and Seen record, and the call.
type prepared struct {
	given *charmapi.Universe
	hash  string
	seen  *model.Seen
	call  *Call
	hook  Hook
}

// prepare sets up a run of unit's hook on the universe it sees now; timer
// makes it an update-status run.
func (r *runner) prepare(unit string, timer bool) (*prepared, error) {
	u := r.fsm.st.Units[unit]
	dressed, hash, seen := Handout(r.fsm.st, unit)
	if timer {
		dressed, hash, seen = TimerHandout(r.fsm.st, unit)
	}
	dir := filepath.Join(r.dir, strings.ReplaceAll(unit, "/", "-"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	c, err := newCall(&dressed, dir)
	if err != nil {
		return nil, err
	}
	var given charmapi.Universe
	if err := json.Unmarshal(c.Input, &given); err != nil {
		return nil, err
	}
	c.Universe = &given
	c.Timeout = r.s.opts.HookTimeout
	c.Model, c.Principal = r.fsm.st.Name, u.Principal
	c.Status = &charmapi.Status{State: u.Status.State, Message: u.Status.Message}
	c.Ports = slices.Clone(u.Ports)
	if c.Resources, err = r.unitResources(unit, dir, given.Resources); err != nil {
		return nil, fmt.Errorf("resources of %s: %w", unit, err)
	}
	return &prepared{given: &given, hash: hash, seen: seen, call: c, hook: r.s.hooks[u.Service]}, nil
}

// claim runs unit's hook on the universe it sees now, as an agent would,
// and keeps the result in flight; timer makes it an update-status run.
func (r *runner) claim(ctx context.Context, unit string, timer bool) error {
	u := r.fsm.st.Units[unit]
	p, err := r.prepare(unit, timer)
	if err != nil {
		return err
	}
	out, herr := p.hook.Run(ctx, p.call)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if !timer {
		// The timer's runs are not steps towards the fixed point, and
		// there is one round of them: they count in neither the
		// reconciles reported nor MaxReconciles.
		r.hooks.runs++
	}
	r.record(unit, p.given, out, herr, false)
	if r.idx == 0 && !r.hooks.ran[unit] {
		// Run each unit's first universe twice in schedule 0, so that a
		// hook that is not a function of its universe shows up even in
		// a single schedule.
		out2, herr2 := p.hook.Run(ctx, p.call)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r.record(unit, p.given, out2, herr2, false)
	}
	r.hooks.ran[unit] = true

	res := r.translate(unit, p.hash, p.seen, p.given, out, herr)
	res.Timer = timer || schedule.TimerRun(u, p.hash)
	r.hooks.flight = append(r.hooks.flight, &flight{unit: unit, uni: p.given, res: res})
	return nil
}

// checkRuns runs, once more on the universe it settled on, every unit
// that wrote a value it did not see (a first write, long enough to be
// generated) and has not run since with that value in its universe: the
// report needs to know whether the unit reads the value back
// (generated.go). The result is recorded, not applied. Old-hook and ops
// charms get update-status, as a timer run would give them: with no
// event, no hook of theirs would run at all.
func (r *runner) checkRuns(ctx context.Context) error {
	for _, unit := range r.fsm.st.SortedUnits() {
		if !needsCheck(r.trail.calls, unit) {
			continue
		}
		u := r.fsm.st.Units[unit]
		timer := false
		if svc := r.fsm.st.Services[u.Service]; svc != nil {
			if ch := r.fsm.st.Charms[svc.Charm]; ch != nil && ch.Legacy {
				timer = true
			}
		}
		p, err := r.prepare(unit, timer)
		if err != nil {
			return err
		}
		out, herr := p.hook.Run(ctx, p.call)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r.record(unit, p.given, out, herr, true)
	}
	return nil
}

// translate checks a hook's output and makes it a model.Result, as the
// controller does when an agent reports.
func (r *runner) translate(unit, hash string, seen *model.Seen, uni *charmapi.Universe, out []byte, herr error) *model.Result {
	msg := ""
	if herr != nil {
		msg = herr.Error()
	}
	res := engine.ResultOf(uni, hash, seen, out, msg, r.hooks.last[unit])
	if res.Error != "" {
		res.RetryAt = schedule.RetryAt(schedule.DefaultBackoff, uni.Attempt, r.fsm.now()).UnixNano()
	}
	return res
}

// record remembers what a hook returned for a universe.
func (r *runner) record(unit string, uni *charmapi.Universe, out []byte, herr error, check bool) {
	v := *uni
	v.Attempt = 0
	in, _ := json.Marshal(&v)
	rec := callRecord{unit: unit, in: shortDigest(in), own: ownFlat(uni), check: check}
	if herr != nil {
		rec.out = "error: " + herr.Error()
		rec.result = map[string]string{"error": firstLine(herr.Error())}
	} else if res, err := decodeResult(out); err != nil {
		rec.out = "bad output: " + string(out)
		rec.result = map[string]string{"output": string(out)}
	} else {
		canon, _ := json.Marshal(res)
		rec.out = string(canon)
		rec.result = flatResult(res)
	}
	r.trail.calls = append(r.trail.calls, rec)
}

// ownFlat lists what a universe shows of the unit's own data, keyed as
// flatResult keys a result.
func ownFlat(u *charmapi.Universe) map[string]string {
	out := map[string]string{}
	for _, rel := range u.Relations {
		for k, v := range rel.Local {
			out["relations."+rel.Ident+".local."+k] = v
		}
		for k, v := range rel.App {
			out["relations."+rel.Ident+".app."+k] = v
		}
	}
	for k, v := range u.LeaderData {
		out["leader_data."+k] = v
	}
	for k, v := range u.State {
		out["state."+k] = v
	}
	return out
}
