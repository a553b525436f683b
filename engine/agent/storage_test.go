package agent_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
)

// A reconcile hook's universe lists its storage with each instance's
// location, a 0700 directory under the agent's data dir that outlives the
// agent; the dying unit's last successful run removes it.
func TestStorageDirectories(t *testing.T) {
	f, srv := newFakePlane(t)
	f.sent = `{"service": "web", "unit": "web/0", "life": "alive", "relations": [], "storage": [{"id": "data/3", "name": "data", "kind": "filesystem"}]}`
	dir := t.TempDir()
	stop := start(t, srv.URL, dir)
	if rep := f.report(t); rep.Error != "" {
		t.Fatalf("report %+v", rep)
	}
	must(t, stop())
	var u charmapi.Universe
	b, err := os.ReadFile(filepath.Join(dir, "units", "web-0", "universe.json"))
	must(t, err)
	must(t, json.Unmarshal(b, &u))
	want := filepath.Join(dir, "storage", "web-0", "data", "3")
	if len(u.Storage) != 1 || u.Storage[0].Location != want {
		t.Fatalf("the hook's universe lists %+v; want data/3 at %s", u.Storage, want)
	}
	if fi, err := os.Stat(want); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("%s: %v %v; want a 0700 directory", want, err, fi)
	}
	must(t, os.WriteFile(filepath.Join(want, "kept"), []byte("x"), 0o600))

	// Restarted, the agent runs the unit again: the data is there.
	f.forget()
	stop = start(t, srv.URL, dir)
	f.report(t)
	must(t, stop())
	if _, err := os.Stat(filepath.Join(want, "kept")); err != nil {
		t.Fatalf("a restarted agent lost the unit's data: %v", err)
	}

	// The unit's last run: its storage goes once the run has succeeded.
	f.mu.Lock()
	f.sent = `{"service": "web", "unit": "web/0", "life": "dying", "relations": [], "storage": [{"id": "data/3", "name": "data", "kind": "filesystem"}]}`
	f.mu.Unlock()
	f.forget()
	stop = start(t, srv.URL, dir)
	if rep := f.report(t); rep.Error != "" {
		t.Fatalf("last run %+v", rep)
	}
	must(t, stop())
	if _, err := os.Stat(filepath.Join(dir, "storage", "web-0")); !os.IsNotExist(err) {
		t.Errorf("the removed unit's storage is still there: %v", err)
	}
}
