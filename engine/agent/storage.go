package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// A unit's storage instances are directories under the agent's data dir,
// DataDir/storage/<unit>/<name>/<N> (DataDir/envs/<env>/storage/... for
// an environment other than the default one) (Juju mounts at
// /var/lib/juju/storage/<name>/<N> when the charm names no location). They
// are made before the unit's first hook that lists them, kept across
// agent restarts and charm upgrades (they are not in the unit's charm
// directory), and removed once the unit's last reconcile has run, or, for
// a unit removed without a last run here (the agent was down, the unit
// was forced out, the machine was reset), once the control plane says the
// unit is no longer placed on this machine (sweepStorage).

// sweepHeartbeats is how many heartbeats apart the agent sweeps the
// storage of units no longer placed on its machine.
const sweepHeartbeats = 12

// storageDir is where the storage instances of unit of environment env
// live: under the environment's directory (envs.go).
func (a *Agent) storageDir(env, unit string) (string, error) {
	root, err := a.envRoot(env)
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "storage", strings.ReplaceAll(unit, "/", "-")), nil
}

// attachStorage gives w a copy of its universe whose instances have
// their directories (engine.AttachStorage), encoded for the hook.
func (a *Agent) attachStorage(w *wire.Work) error {
	if w.Universe == nil || len(w.Universe.Storage) == 0 {
		return nil
	}
	if err := model.CheckUnitName(w.Unit); err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	dir, err := a.storageDir(w.Env, w.Unit)
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	u, err := engine.AttachStorage(dir, w.Universe)
	if err != nil {
		return err
	}
	b, err := json.Marshal(u)
	if err != nil {
		return fmt.Errorf("encode universe: %w", err)
	}
	w.Universe, w.UniverseJSON = u, b
	return nil
}

// releaseStorage removes the unit's storage once its last reconcile (the
// dying universe's, which ran each instance's storage-detaching hook)
// succeeded: the unit is removed from the state with that report. Data
// of a unit that is not leaving is never removed.
func (a *Agent) releaseStorage(w wire.Work, rep wire.Report) {
	if w.Universe == nil || w.Universe.Life != string(model.Dying) || rep.Error != "" {
		return
	}
	if model.CheckUnitName(w.Unit) != nil {
		return
	}
	dir, err := a.storageDir(w.Env, w.Unit)
	if err != nil {
		return
	}
	if _, err := os.Stat(dir); err != nil {
		return
	}
	if err := os.RemoveAll(dir); err != nil {
		a.cfg.Log.Warn("could not remove the storage of a removed unit", "unit", w.Unit, "dir", dir, "error", err)
		return
	}
	a.cfg.Log.Info("removed the storage of a removed unit", "unit", w.Unit, "dir", dir)
}

// keptUnits lists, by unit key (wire.UnitKey), the units that have a
// storage directory, in the default environment and in every other one
// this machine keeps a directory of.
func (a *Agent) keptUnits() ([]string, error) {
	envs, err := a.envDirs()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, env := range append([]string{""}, envs...) {
		root, err := a.envRoot(env)
		if err != nil {
			continue
		}
		entries, err := os.ReadDir(filepath.Join(root, "storage"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list storage: %w", err)
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			// storageDir's name is the unit's with "/" as "-"; a unit's
			// number follows its last "-".
			i := strings.LastIndexByte(e.Name(), '-')
			if i < 0 {
				continue
			}
			unit := e.Name()[:i] + "/" + e.Name()[i+1:]
			if dir, err := a.storageDir(env, unit); model.CheckUnitName(unit) == nil && err == nil && filepath.Base(dir) == e.Name() {
				out = append(out, wire.UnitKey(env, unit))
				if len(out) == api.MaxKept {
					return out, nil
				}
			}
		}
	}
	return out, nil
}

// sweepStorage removes the storage of the units the control plane no
// longer places on this machine. The answer comes from the latest
// committed state, so a unit that exists and is placed here keeps its
// data across any restart; without an answer nothing is removed.
func (a *Agent) sweepStorage(ctx context.Context) {
	kept, err := a.keptUnits()
	if err != nil {
		a.cfg.Log.Warn("could not list the storage of this machine's units", "error", err)
		return
	}
	if len(kept) == 0 {
		return
	}
	released, err := a.client.Released(ctx, a.cfg.Machine, kept)
	if err != nil {
		if ctx.Err() == nil {
			a.cfg.Log.Warn("could not ask which units' storage to remove; it is kept and asked again later", "error", err)
		}
		return
	}
	for _, key := range released {
		if !slices.Contains(kept, key) {
			continue
		}
		a.mu.Lock()
		running := a.running[key]
		a.mu.Unlock()
		if running {
			// Its run is ending; the next sweep removes it.
			continue
		}
		env, unit := wire.SplitUnitKey(key)
		dir, err := a.storageDir(env, unit)
		if err != nil {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			a.cfg.Log.Warn("could not remove the storage of a unit no longer on this machine", "unit", unit, "env", env, "dir", dir, "error", err)
			continue
		}
		a.cfg.Log.Info("removed the storage of a unit no longer on this machine", "unit", unit, "env", env, "dir", dir)
	}
}
