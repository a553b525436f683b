package unijson

import (
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
)

// TestStorageEncodedAsJSON checks a universe's storage instances and a
// storage event, with and without a location, as encoding/json writes
// them; a universe without storage has no storage key.
func TestStorageEncodedAsJSON(t *testing.T) {
	encodesAsJSON(t, &charmapi.Universe{Unit: "store/0", Storage: []charmapi.Storage{
		{ID: "data/0", Name: "data", Kind: "filesystem", Location: "/var/lib/fixpoint/agent/storage/store-0/data/0"},
		{ID: "logs/3", Name: "logs", Kind: "filesystem"},
	}, Events: []charmapi.Event{{Hook: "logs-storage-attached", Storage: "logs/3"}}}, nil)
	encodesAsJSON(t, &charmapi.Universe{Unit: "store/1"}, nil)
}
