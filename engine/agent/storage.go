package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fixpoint/fixpoint/charmapi"
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

// attachStorage makes a directory for each instance w's universe lists
// (0700: the unit's hooks run as the agent's user, and nobody else reads
// the data) and gives w a copy of its universe with each location filled
// in. The universe the work came with may be shared and is never changed.
func (a *Agent) attachStorage(w *wire.Work) error {
	if w.Universe == nil || len(w.Universe.Storage) == 0 {
		return nil
	}
	if err := model.CheckUnitName(w.Unit); err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	base := a.storageDir(w.Unit)
	u := *w.Universe
	u.Storage = make([]charmapi.Storage, len(w.Universe.Storage))
	for i, st := range w.Universe.Storage {
		if err := model.CheckStorageID(st.ID); err != nil {
			return fmt.Errorf("storage: %w", err)
		}
		dir := filepath.Join(base, filepath.FromSlash(st.ID))
		if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
			return fmt.Errorf("storage %s: %w", st.ID, err)
		}
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("storage %s: %w", st.ID, err)
		}
		st.Location = dir
		u.Storage[i] = st
	}
	b, err := json.Marshal(&u)
	if err != nil {
		return fmt.Errorf("encode universe: %w", err)
	}
	w.Universe, w.UniverseJSON = &u, b
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
