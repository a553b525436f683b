package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/ledger"
	"github.com/fixpoint/fixpoint/engine/schedule"
	"github.com/fixpoint/fixpoint/model"
)

// reads answers what the controller is asked about units and their
// phases, each at one read of the state: the ledger brings the views up
// to it and snapshots its claims (handout.claimsAt), status reads those
// under its own lock. It holds no lock of its own.
type reads struct {
	store Store
	opts  *Options
	work  *handout
	stat  *statusState
	views *ledger.Staleness
}

// status is Controller.Status.
func (r *reads) status() (*Status, error) {
	var out *Status
	err := r.store.View(func(st *model.State) error {
		out = r.stat.status(st, r.work.claimsAt(st))
		return nil
	})
	return out, err
}

// summary is Controller.Summary. It recounts under status's lock only the
// units whose phase may have moved since the last summary (recount.go), and
// walks those out of settled and blocked for its lists, so that a
// summary's cost follows what changed, not the environment; while most
// units are out of settled it counts every unit as it walks.
func (r *reads) summary(limit int) (*Summary, error) {
	if limit <= 0 {
		limit = SummaryLimit
	}
	var out *Summary
	err := r.store.View(func(st *model.State) error {
		out = r.stat.summary(st, limit, r.work.claimsAt(st))
		return nil
	})
	return out, err
}

// unit is Controller.Unit: what it costs grows with the unit's
// relations, not with the environment.
func (r *reads) unit(name string) (*UnitDetail, error) {
	var out *UnitDetail
	err := r.store.View(func(st *model.State) error {
		u := st.Units[name]
		if u == nil {
			return NoUnitError(st, name)
		}
		us := r.stat.unitStatus(st, name, u, r.work.claimsAt(st))
		out = NewUnitDetail(st, name, us)
		return nil
	})
	return out, err
}

// universe is Controller.Universe.
func (r *reads) universe(unit string) (*charmapi.Universe, error) {
	var out *charmapi.Universe
	err := r.store.View(func(st *model.State) error {
		v, built, seen, _ := r.work.current(st, unit)
		if st.Units[unit] == nil {
			return NoUnitError(st, unit)
		}
		if v == nil || built == nil {
			return fmt.Errorf("unit %s does not exist (units: %d in the environment)", unit, len(st.Units))
		}
		uni := schedule.RunUniverse(st, st.Units[unit], built, v.Hash, seen)
		out = &uni
		return nil
	})
	return out, err
}

// explain is Controller.Explain.
func (r *reads) explain(unit string) (*Explanation, error) {
	var out *Explanation
	err := r.store.View(func(st *model.State) error {
		v, built, seen, claims := r.work.current(st, unit)
		u := st.Units[unit]
		if v == nil || built == nil || u == nil {
			return fmt.Errorf("unit %s does not exist", unit)
		}
		uni := schedule.RunUniverse(st, u, built, v.Hash, seen)
		status := r.stat.unitStatus(st, unit, u, claims)
		e := &Explanation{Unit: unit, Phase: status.Phase, Stale: v.Hash != u.Reconciled, Reconciled: u.Reconciled, Current: v.Hash, Events: uni.Events, Error: u.Error}
		switch last := r.views.LastOf(unit); {
		case last != nil:
			e.Changes = Diff(last, &uni)
			markSecretConfig(st, u.Service, e.Changes)
		case u.Reconciled == "":
			e.Note = "the unit has never reconciled: everything is new to it"
		default:
			e.Note = "this node has not seen the universe last reconciled (it keeps them in memory); the events show what moved"
		}
		if !v.Member {
			e.Note = fmt.Sprintf("the unit waits for machine %q to register; until then it sees no relations", u.Machine)
		}
		out = e
		return nil
	})
	return out, err
}

// sampleTimeline is Controller.SampleTimeline: every status summary
// records its counts, and this makes one at each change even when nobody
// asks. A large environment is counted less often, as the summary's
// waiters ask (a pause that grows with the unit count), so that sampling
// never holds the hand-outs back.
func (r *reads) sampleTimeline(ctx context.Context) {
	pause := time.NewTimer(0)
	defer pause.Stop()
	for {
		gen := r.stat.changed.current()
		pace := timelineStep
		if r.opts.IsLeader == nil || r.opts.IsLeader() {
			if sum, err := r.summary(SummaryLimit); err == nil {
				gen = sum.Generation
				pace = max(pace, time.Duration(sum.Phases.Units/10000)*100*time.Millisecond)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-r.stat.changed.since(gen):
		}
		pause.Reset(pace)
		select {
		case <-ctx.Done():
			return
		case <-pause.C:
		}
	}
}

// stats is Controller.Stats: the handout's counters and status's.
func (r *reads) stats() WorkStats {
	w := r.work.stats()
	w.Recounted = r.stat.recounted()
	return w
}
