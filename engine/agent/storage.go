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
// DataDir/storage/<unit>/<name>/<N> (Juju mounts at
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

// storageDir is where unit's storage instances live.
func (a *Agent) storageDir(unit string) string {
	return filepath.Join(a.cfg.DataDir, "storage", strings.ReplaceAll(unit, "/", "-"))
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
	u, err := engine.AttachStorage(a.storageDir(w.Unit), w.Universe)
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
	dir := a.storageDir(w.Unit)
	if _, err := os.Stat(dir); err != nil {
		return
	}
	if err := os.RemoveAll(dir); err != nil {
		a.cfg.Log.Warn("could not remove the storage of a removed unit", "unit", w.Unit, "dir", dir, "error", err)
		return
	}
	a.cfg.Log.Info("removed the storage of a removed unit", "unit", w.Unit, "dir", dir)
}

// keptUnits lists the units that have a storage directory, by name.
func (a *Agent) keptUnits() ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(a.cfg.DataDir, "storage"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list storage: %w", err)
	}
	var out []string
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
		if model.CheckUnitName(unit) == nil && filepath.Base(a.storageDir(unit)) == e.Name() {
			out = append(out, unit)
			if len(out) == api.MaxKept {
				break
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
	for _, unit := range released {
		if !slices.Contains(kept, unit) {
			continue
		}
		a.mu.Lock()
		running := a.running[unit]
		a.mu.Unlock()
		if running {
			// Its run is ending; the next sweep removes it.
			continue
		}
		dir := a.storageDir(unit)
		if err := os.RemoveAll(dir); err != nil {
			a.cfg.Log.Warn("could not remove the storage of a unit no longer on this machine", "unit", unit, "dir", dir, "error", err)
			continue
		}
		a.cfg.Log.Info("removed the storage of a unit no longer on this machine", "unit", unit, "dir", dir)
	}
}
