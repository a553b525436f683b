package charmapi

import (
	"encoding/json"
	"testing"
)

// TestStorageInTheContract checks the universe's storage and the result's
// storage_add as charms read and write them.
func TestStorageInTheContract(t *testing.T) {
	var u Universe
	in := `{"api":"fixpoint/v1","unit":"store/0","storage":[{"id":"data/0","name":"data","kind":"filesystem","location":"/d/0"},{"id":"logs/3","name":"logs","kind":"filesystem","location":"/l/3"}],"events":[{"hook":"logs-storage-attached","storage":"logs/3"}]}`
	if err := json.Unmarshal([]byte(in), &u); err != nil {
		t.Fatal(err)
	}
	if got := u.StorageNamed("logs"); len(got) != 1 || got[0].ID != "logs/3" || got[0].Location != "/l/3" {
		t.Errorf("StorageNamed(logs) = %+v", got)
	}
	if s := u.Events[0].String(); s != "logs-storage-attached logs/3" {
		t.Errorf("event prints %q", s)
	}
	out, err := json.Marshal(new(Result).AddStorage("logs", 1).AddStorage("logs", 1))
	if err != nil || string(out) != `{"storage_add":{"logs":2}}` {
		t.Errorf("result %s, %v", out, err)
	}
}
