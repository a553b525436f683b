package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// storageOf lists u's storage instances for its universe (the agent fills
// in each location) and for its Seen. A dying unit still lists them: its
// last reconcile runs each one's storage-detaching hook.
func storageOf(u *model.Unit) ([]charmapi.Storage, []string) {
	if len(u.Storage) == 0 {
		return nil, nil
	}
	out := make([]charmapi.Storage, len(u.Storage))
	for i, id := range u.Storage {
		out[i] = charmapi.Storage{ID: id, Name: model.StorageName(id), Kind: model.StorageFilesystem}
	}
	return out, u.Storage
}

// AttachStorage makes a directory under base for each storage instance u
// lists, base/<name>/<N> (0700: the unit's hooks run as the caller's
// user, and nobody else reads the data), and returns a copy of u with
// each instance's location set to its directory; u itself, which may be
// shared, is not changed. An existing directory is kept as it is, with
// what the unit wrote there. A universe without storage is returned as
// it is.
func AttachStorage(base string, u *charmapi.Universe) (*charmapi.Universe, error) {
	if len(u.Storage) == 0 {
		return u, nil
	}
	c := *u
	c.Storage = make([]charmapi.Storage, len(u.Storage))
	for i, st := range u.Storage {
		if err := model.CheckStorageID(st.ID); err != nil {
			return nil, fmt.Errorf("storage: %w", err)
		}
		dir := filepath.Join(base, filepath.FromSlash(st.ID))
		if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
			return nil, fmt.Errorf("storage %s: %w", st.ID, err)
		}
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("storage %s: %w", st.ID, err)
		}
		st.Location = dir
		c.Storage[i] = st
	}
	return &c, nil
}
