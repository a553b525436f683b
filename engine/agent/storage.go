package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/wire"
)

// A unit's storage instances are directories under the agent's data dir,
// DataDir/storage/<unit>/<name>/<N> (Juju mounts at
// /var/lib/juju/storage/<name>/<N> when the charm names no location). They
// are made before the unit's first hook that lists them, kept across
// agent restarts and charm upgrades (they are not in the unit's charm
// directory), and removed once the unit's last reconcile has run.

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
