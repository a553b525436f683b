package simdir

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/fixpoint/fixpoint/engine/charm"
	"github.com/fixpoint/fixpoint/engine/hookrun"
	"github.com/fixpoint/fixpoint/engine/legacy"
	"github.com/fixpoint/fixpoint/engine/sim"
	"github.com/fixpoint/fixpoint/engine/wire"
)

// CacheDir is where the simulator keeps packed charms and Go hook builds:
// the same cache `fixpoint plan` and `apply` use, keyed by content, so a
// charm is built once across test runs.
func CacheDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "fixpoint", "charms")
	}
	return filepath.Join(os.TempDir(), "fixpoint-charms")
}

// Open packs the charm in dir as fixpoint packs it (building src/ with go
// build), unpacks the archive into workDir/<hash> and returns its hook:
// hooks/reconcile run as a process, or the old hooks through the adapter
// (toolsBinary as in Legacy). Both run the charm's actions.
func Open(dir, workDir, toolsBinary string) (sim.Hook, *charm.Packed, error) {
	p, err := charm.Pack(dir, CacheDir())
	if err != nil {
		return nil, nil, err
	}
	h, err := unpackedHook(p, workDir, toolsBinary)
	return h, p, err
}

// unpacked makes sure each archive is extracted once per directory.
var unpacked sync.Map // target dir → *unpackOnce

type unpackOnce struct {
	once sync.Once
	err  error
}

func unpackedHook(p *charm.Packed, workDir, toolsBinary string) (sim.Hook, error) {
	dir := filepath.Join(workDir, p.Hash)
	v, _ := unpacked.LoadOrStore(dir, &unpackOnce{})
	o := v.(*unpackOnce)
	o.once.Do(func() {
		if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
			return
		}
		_ = os.RemoveAll(dir)
		if err := charm.Unpack(p.Path, p.Hash, dir); err != nil {
			o.err = fmt.Errorf("unpack charm %s: %w", p.Meta.Name, err)
			return
		}
		o.err = os.WriteFile(filepath.Join(dir, ".complete"), nil, 0o644)
	})
	if o.err != nil {
		unpacked.Delete(dir)
		return nil, o.err
	}
	if p.Legacy {
		return legacyHook{dir: dir, tools: toolsBinary}, nil
	}
	path := filepath.Join(dir, charm.ReconcileHook)
	return reconcileHook{exec: sim.Exec(path), path: path, charmDir: dir}, nil
}

// reconcileHook is an unpacked charm's hooks/reconcile: sim.Exec's run
// with $FIXPOINT_CHARM_DIR set, and its actions run as the agent runs
// them (charmapi.MainWithActions).
type reconcileHook struct {
	exec           sim.Hook
	path, charmDir string
}

func (h reconcileHook) String() string { return h.path }

func (h reconcileHook) Run(ctx context.Context, c *sim.Call) ([]byte, error) {
	withDir := *c
	withDir.Env = append(c.Env[:len(c.Env):len(c.Env)], "FIXPOINT_CHARM_DIR="+h.charmDir)
	return h.exec.Run(ctx, &withDir)
}

func (h reconcileHook) RunAction(ctx context.Context, c *sim.Call, act wire.Action) *wire.ActionReport {
	env := append(c.Env[:len(c.Env):len(c.Env)], fmt.Sprintf("FIXPOINT_ACTION_ID=%d", act.ID), "FIXPOINT_CHARM_DIR="+h.charmDir)
	out, err := legacy.ReconcileAction(ctx, hookrun.Spec{Path: h.path, Dir: c.Dir, Input: c.Input, InputEnv: "FIXPOINT_UNIVERSE", Env: env, Timeout: c.Timeout}, act.Name, act.Params)
	return legacy.ActionReport(act.ID, c.Universe.Unit, out, err)
}

// Legacy makes an old-hook charm (install, config-changed,
// <rel>-relation-joined, ... in hooks/) a Hook: the engine's adapter runs
// the hooks the universe's events call for, in order, with the Juju hook
// tools, and the charm's actions. Those tools are links to toolsBinary:
// fixpoint-hook or a fixpoint executable ("" means what
// legacy.ToolsProgram finds: fixpoint-hook beside the running binary,
// built with Go, or the running binary).
func Legacy(charmDir, toolsBinary string) sim.Hook {
	if abs, err := filepath.Abs(charmDir); err == nil {
		charmDir = abs
	}
	return legacyHook{dir: charmDir, tools: toolsBinary}
}

type legacyHook struct{ dir, tools string }

func (h legacyHook) String() string { return "old hooks of " + h.dir }

// options are the adapter's options for a run of c.
func (h legacyHook) options(c *sim.Call) legacy.Options {
	return legacy.Options{
		CharmDir: h.dir, UnitDir: c.Dir, ToolsBinary: h.tools, Timeout: c.Timeout,
		Env:   append(c.Env[:len(c.Env):len(c.Env)], "FIXPOINT_CHARM_DIR="+h.dir),
		Model: c.Model, PrincipalUnit: c.Principal, Status: c.Status, Ports: c.Ports, Resources: c.Resources,
	}
}

func (h legacyHook) Run(ctx context.Context, c *sim.Call) ([]byte, error) {
	res, _, err := legacy.Run(ctx, h.options(c), c.Universe)
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

func (h legacyHook) RunAction(ctx context.Context, c *sim.Call, act wire.Action) *wire.ActionReport {
	out, err := legacy.RunAction(ctx, h.options(c), c.Universe, legacy.Action{ID: act.ID, Name: act.Name, Params: act.Params})
	return legacy.ActionReport(act.ID, c.Universe.Unit, out, err)
}
