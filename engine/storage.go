package engine

import (
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
