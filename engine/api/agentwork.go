package api

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// Agents is what the agent routes ask of the engine: the work polls,
// results, heartbeats and releases of a machine's agent, over every
// environment it may be handed work of. engine/fleet.Fleet provides it;
// a server given a Controller alone serves the default environment.
type Agents interface {
	// WaitForWork is a work poll; envs says the agent keeps each
	// environment's units apart, without which it is handed the
	// default environment's work alone.
	WaitForWork(ctx context.Context, machine string, max int, wait time.Duration, envs bool) ([]wire.Work, error)
	Accept(ctx context.Context, machine string, reports []wire.Report) (*model.Response, error)
	Heartbeat(machine string)
	// ReleaseExcept takes the agent's word for the units it runs, named
	// by unit key (wire.UnitKey): every claim of the machine's agent in
	// any environment but those is dropped.
	ReleaseExcept(machine string, running []string)
	Release(machine string)
	// Controller is environment env's controller ("" the default one),
	// nil when none serves it: an agent's operations go to it.
	Controller(env string) *engine.Controller
}

// oneEnv serves the agents from one controller: the default
// environment's.
type oneEnv struct{ ctl *engine.Controller }

func (o oneEnv) WaitForWork(ctx context.Context, machine string, max int, wait time.Duration, _ bool) ([]wire.Work, error) {
	return o.ctl.WaitForWork(ctx, machine, max, wait)
}

// Accept skips the reports of another environment: no claim of it
// exists here.
func (o oneEnv) Accept(ctx context.Context, machine string, reports []wire.Report) (*model.Response, error) {
	var own []wire.Report
	var skipped []string
	for _, r := range reports {
		if r.Env != "" {
			skipped = append(skipped, fmt.Sprintf("%s: environment %s is not served by this control plane", r.Unit, model.Quote(r.Env, 72)))
			continue
		}
		own = append(own, r)
	}
	resp, err := o.ctl.Accept(ctx, machine, own)
	if err != nil {
		return nil, err
	}
	resp.Skipped = append(resp.Skipped, skipped...)
	return resp, nil
}

func (o oneEnv) Heartbeat(machine string) { o.ctl.Heartbeat(machine) }

// ReleaseExcept keeps the default environment's units of running: no
// claim of another environment exists here.
func (o oneEnv) ReleaseExcept(machine string, running []string) {
	own := make([]string, 0, len(running))
	for _, key := range running {
		if env, unit := wire.SplitUnitKey(key); env == "" {
			own = append(own, unit)
		}
	}
	o.ctl.ReleaseExcept(machine, own)
}
func (o oneEnv) Release(machine string) { o.ctl.Release(machine) }

func (o oneEnv) Controller(env string) *engine.Controller {
	if env == "" {
		return o.ctl
	}
	return nil
}

// pollEnvs reads a work poll's envs=: "1" (or "true") says the agent
// runs each environment's units in their own directories, so that it
// may be handed the work of any environment. An agent that does not say
// so is handed the default environment's work alone.
func pollEnvs(q url.Values) (bool, error) {
	switch v := q.Get("envs"); v {
	case "", "0", "false":
		return false, nil
	case "1", "true":
		return true, nil
	default:
		return false, fmt.Errorf("envs=%q is not a boolean; the agent sends envs=1 when it keeps each environment's units apart", model.Quote(v, 32))
	}
}
