package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fixpoint/fixpoint/engine/hookrun"
	"github.com/fixpoint/fixpoint/engine/legacy"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// An operation (action or exec) handed out with w.Action runs here: under
// the unit's run lock, so never beside one of its hooks, after the
// control plane agreed to it being started (it runs once), and its
// outcome is reported at once, retried until the control plane answers.

// takeAction notes that operation id is being run by this agent; false
// when it already is (the control plane handed it out again).
func (a *Agent) takeAction(id int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.acting == nil {
		a.acting = map[int]bool{}
	}
	if a.acting[id] {
		return false
	}
	a.acting[id] = true
	return true
}

func (a *Agent) dropAction(id int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.acting, id)
}

// runAction takes, runs and reports operation w.Action on w.Unit.
func (a *Agent) runAction(ctx context.Context, w wire.Work) {
	act := w.Action
	log := a.cfg.Log.With("unit", w.Unit, "env", w.Env, "operation", act.ID, "action", act.Name)
	if !a.takeAction(act.ID) {
		return
	}
	defer a.dropAction(act.ID)
	charmDir, err := a.charm(ctx, w.Charm)
	if err != nil {
		log.Warn("operation not started: its charm could not be fetched; it is handed out again", "error", err)
		return
	}
	unitDir, err := a.unitDir(w.Env, w.Unit)
	if err != nil {
		log.Warn("operation not started", "error", err)
		return
	}
	if err := os.MkdirAll(unitDir, 0o755); err != nil {
		log.Warn("operation not started", "error", err)
		return
	}
	lock, err := a.lockUnit(ctx, w)
	if err != nil {
		log.Warn("operation not started", "error", err)
		return
	}
	defer lock.Unlock()
	if err := a.client.StartAction(ctx, a.cfg.Machine, w.Env, act.ID); err != nil {
		// Started elsewhere, finished or failed already, or the unit
		// moved: not this agent's to run.
		log.Info("operation not started: the control plane refused it", "error", err)
		return
	}
	log.Info("operation started")
	start := time.Now()
	rep := a.operate(ctx, w, charmDir, unitDir, lock)
	rep.Env = w.Env
	log.Info("operation finished", "failed", rep.Failed, "message", rep.Message, "took", time.Since(start).Round(time.Millisecond))
	if ctx.Err() != nil {
		// The agent is stopping: the control plane fails the operation
		// when this machine's agent registers again.
		return
	}
	_ = retry(ctx, a.cfg.Log, fmt.Sprintf("report operation %d", act.ID), func() error {
		return a.client.FinishAction(ctx, a.cfg.Machine, rep)
	})
}

// operate runs the operation and says what it came to.
func (a *Agent) operate(ctx context.Context, w wire.Work, charmDir, unitDir string, lock *hookrun.UnitLock) *wire.ActionReport {
	act := w.Action
	// storage-get and the universe's storage show each instance's
	// directory in an action as in a hook.
	if err := a.attachStorage(&w); err != nil {
		return legacy.ActionReport(act.ID, w.Unit, nil, fmt.Errorf("operation %d of %s: %w", act.ID, w.Unit, err))
	}
	env := a.hookEnv(w, charmDir)
	modelName, modelUUID := modelOf(w)
	var out *legacy.ActionOutcome
	var err error
	if w.Legacy {
		// resource-get works in an action as in a hook.
		var resources map[string]string
		if resources, err = a.unitResources(ctx, w, charmDir, unitDir); err == nil {
			out, err = legacy.RunAction(ctx, legacy.Options{CharmDir: charmDir, UnitDir: unitDir, Timeout: a.cfg.HookTimeout, MaxOutput: a.cfg.MaxOutput, Env: env,
				Log: a.unitLog(w), HookShell: a.cfg.HookShell, Model: modelName, ModelUUID: modelUUID, PrincipalUnit: w.Principal, Status: w.Status, Ports: w.Ports, Track: lock,
				Resources: resources}, w.Universe, legacy.Action{ID: act.ID, Name: act.Name, Params: act.Params, Exec: act.Exec})
		}
	} else {
		out, err = a.reconcileAction(ctx, w, charmDir, unitDir, env, lock)
	}
	return legacy.ActionReport(act.ID, w.Unit, out, err)
}

// reconcileAction runs an operation on a reconcile charm's unit: an
// action through hooks/reconcile with $FIXPOINT_ACTION set
// (charmapi.MainWithActions), or exec's command as a script in the unit's
// directory with the unit's FIXPOINT_ environment and universe.
func (a *Agent) reconcileAction(ctx context.Context, w wire.Work, charmDir, unitDir string, env []string, lock *hookrun.UnitLock) (*legacy.ActionOutcome, error) {
	act := w.Action
	input, err := universeInput(w)
	if err != nil {
		return nil, err
	}
	spec := hookrun.Spec{Path: filepath.Join(charmDir, "hooks", "reconcile"), Dir: unitDir, Input: input, InputEnv: "FIXPOINT_UNIVERSE",
		Timeout: a.cfg.HookTimeout, MaxOutput: a.cfg.MaxOutput, Track: lock,
		Env: append(env, fmt.Sprintf("FIXPOINT_ACTION_ID=%d", act.ID))}
	if act.Name == model.ExecName {
		f, err := os.CreateTemp(unitDir, ".exec-*.sh")
		if err != nil {
			return nil, fmt.Errorf("exec: %w", err)
		}
		defer os.Remove(f.Name())
		_, err = f.WriteString("#!/bin/sh\n" + act.Exec + "\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Chmod(f.Name(), 0o700)
		}
		if err != nil {
			return nil, fmt.Errorf("exec: %w", err)
		}
		spec.Path = f.Name()
		out, err := hookrun.Run(ctx, spec)
		res := &legacy.ActionOutcome{Results: map[string]any{"return-code": 0.0}}
		if out != nil {
			if len(out.Stdout) > 0 {
				res.Results["stdout"] = string(out.Stdout)
			}
			if out.Stderr != "" {
				res.Results["stderr"] = out.Stderr
			}
		}
		switch {
		case out != nil:
			res.Results["return-code"] = float64(out.Code)
		case err != nil:
			return nil, fmt.Errorf("exec: %w", err)
		}
		return res, nil
	}
	return legacy.ReconcileAction(ctx, spec, act.Name, act.Params)
}
