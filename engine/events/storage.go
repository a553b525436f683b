package events

import (
	"slices"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// Storage hook kinds; the hook name is "<store>-storage-<kind>".
const (
	StorageAttached  = "attached"
	StorageDetaching = "detaching"
)

// StorageHook returns the hook name for a storage event,
// e.g. StorageHook("data/0", StorageAttached) = "data-storage-attached".
func StorageHook(id, kind string) string { return model.StorageName(id) + "-storage-" + kind }

func (d *deriver) emitStorage(id, kind string) {
	d.out = append(d.out, charmapi.Event{Hook: StorageHook(id, kind), Storage: id})
}

// attached emits storage-attached for each instance the unit has now that
// it had not seen (known), in the order they were attached.
func (d *deriver) attached(known []string) {
	for _, id := range d.after.Storage {
		if !slices.Contains(known, id) {
			d.emitStorage(id, StorageAttached)
		}
	}
}
