package fleet

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// ErrNoEnv means a report or request names an environment the fleet runs
// no controller for.
var ErrNoEnv = errors.New("no such environment")

// WaitForWork is a work poll of machine's agent, answered by every
// environment's controller the agent may be handed work of: the default
// environment's alone unless envs says the agent keeps each
// environment's units in their own directories (a capability its poll
// declares). An agent that does not would run another environment's
// db/0 in the default one's directory, so it is never handed such work.
//
// A poll of several environments looks at each in turn, in an order that
// rotates from look to look so that none starves another, and max bounds
// the units of all of them together. When none has work it sleeps on its
// machine's signal, shared by every environment's controller (waitAll).
func (f *Fleet) WaitForWork(ctx context.Context, machine string, max int, wait time.Duration, envs bool) ([]wire.Work, error) {
	ms := f.order(envs)
	if len(ms) == 1 {
		work, err := ms[0].ctl.WaitForWork(ctx, machine, max, wait)
		stamp(work, ms[0])
		return work, err
	}
	return f.waitAll(ctx, machine, max, wait, envs, ms)
}

// order is the members a poll is served by, in this poll's turn: the
// default environment alone unless envs.
func (f *Fleet) order(envs bool) []*member {
	f.mu.Lock()
	defer f.mu.Unlock()
	// Copies: the default member's uuid is set by Sync, under the lock.
	if !envs || len(f.members) == 1 {
		def := *f.members[""]
		return []*member{&def}
	}
	names := make([]string, 0, len(f.members))
	for name := range f.members {
		names = append(names, name)
	}
	sort.Strings(names)
	f.turn = (f.turn + 1) % len(names)
	ms := make([]*member, len(names))
	for i := range names {
		m := *f.members[names[(f.turn+i)%len(names)]]
		ms[i] = &m
	}
	return ms
}

// stamp names m's environment in each unit of work it handed out.
func stamp(work []wire.Work, m *member) {
	for i := range work {
		work[i].Env, work[i].EnvUUID = m.name, m.uuid
	}
}

// giveBack returns work, stamped with its environments, to the
// controllers that handed it out.
func (f *Fleet) giveBack(machine string, work []wire.Work) {
	byEnv := map[string][]wire.Work{}
	for _, w := range work {
		byEnv[w.Env] = append(byEnv[w.Env], w)
	}
	for env, ws := range byEnv {
		if ctl := f.Controller(env); ctl != nil {
			ctl.GiveBack(machine, ws)
		}
	}
}

// Accept hands each report to its environment's controller (Report.Env,
// "" the default one) and merges their answers. A report naming an
// environment the fleet runs no controller for is skipped with the
// reason, as a report whose claim is gone is: no claim of it exists.
func (f *Fleet) Accept(ctx context.Context, machine string, reports []wire.Report) (*model.Response, error) {
	var envs []string
	byEnv := map[string][]wire.Report{}
	for _, r := range reports {
		if _, ok := byEnv[r.Env]; !ok {
			envs = append(envs, r.Env)
		}
		byEnv[r.Env] = append(byEnv[r.Env], r)
	}
	if len(envs) <= 1 {
		env := ""
		if len(envs) == 1 {
			env = envs[0]
		}
		ctl := f.Controller(env)
		if ctl == nil {
			return skipped(byEnv[env]), nil
		}
		return ctl.Accept(ctx, machine, reports)
	}
	out := &model.Response{}
	for _, env := range envs {
		ctl := f.Controller(env)
		if ctl == nil {
			out.Skipped = append(out.Skipped, skipped(byEnv[env]).Skipped...)
			continue
		}
		resp, err := ctl.Accept(ctx, machine, byEnv[env])
		if err != nil {
			return nil, fmt.Errorf("environment %s: %w", model.Quote(env, 72), err)
		}
		out.Index = max(out.Index, resp.Index)
		out.Skipped = append(out.Skipped, resp.Skipped...)
	}
	return out, nil
}

// skipped is the answer to reports of an environment with no controller.
func skipped(reports []wire.Report) *model.Response {
	out := &model.Response{}
	for _, r := range reports {
		out.Skipped = append(out.Skipped, fmt.Sprintf("%s: %v %s on this control plane", r.Unit, ErrNoEnv, model.Quote(r.Env, 72)))
	}
	return out
}

// Heartbeat records that machine's agent is alive: the contacts are
// shared, so every environment's controller hears it.
func (f *Fleet) Heartbeat(machine string) { f.Default().Heartbeat(machine) }

// ReleaseExcept takes the agent's word for the units it runs, in every
// environment: running names them by unit key (wire.UnitKey), a bare
// name the default environment's, so each environment's controller keeps
// the claims of its own running units alone. An agent that keeps no
// environments apart runs only default units, and no other environment
// holds a claim of it.
func (f *Fleet) ReleaseExcept(machine string, running []string) {
	byEnv := map[string][]string{}
	for _, key := range running {
		env, unit := wire.SplitUnitKey(key)
		byEnv[env] = append(byEnv[env], unit)
	}
	for _, m := range f.all() {
		own := byEnv[m.name]
		if own == nil {
			own = []string{}
		}
		m.ctl.ReleaseExcept(machine, own)
	}
}

// Release gives up every claim of machine's agent in every environment.
func (f *Fleet) Release(machine string) {
	for _, m := range f.all() {
		m.ctl.Release(machine)
	}
}

// all is every member, at one moment.
func (f *Fleet) all() []*member {
	f.mu.Lock()
	defer f.mu.Unlock()
	ms := make([]*member, 0, len(f.members))
	for _, m := range f.members {
		ms = append(ms, m)
	}
	return ms
}
