package agent_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
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

// The storage of units the control plane no longer places on the
// machine (removed while the agent was down, or forced out without a last
// run) is swept once the agent has registered and asked; a restarted
// agent keeps the data of a unit still placed on it, and leaves alone
// what is not a unit's storage.
func TestStorageOfUnitsNoLongerPlacedIsSwept(t *testing.T) {
	f, srv := newFakePlane(t)
	f.idle = true
	dir := t.TempDir()
	kept := filepath.Join(dir, "storage", "web-0", "data", "3", "kept")
	gone := filepath.Join(dir, "storage", "my-db-12", "data", "4", "gone")
	other := filepath.Join(dir, "storage", "lost+found")
	for _, p := range []string{kept, gone} {
		must(t, os.MkdirAll(filepath.Dir(p), 0o700))
		must(t, os.WriteFile(p, []byte("x"), 0o600))
	}
	must(t, os.MkdirAll(other, 0o700))
	swept := func(unitDir string) {
		t.Helper()
		rafttest.Eventually(t, time.Minute, "the agent sweeps "+unitDir, func() error {
			if _, err := os.Stat(filepath.Join(dir, "storage", unitDir)); !os.IsNotExist(err) {
				return fmt.Errorf("%s is still there: %v", unitDir, err)
			}
			return nil
		})
	}

	// Restarted while web/0 is still placed here, my-db/12 not. One
	// sweep decides both, and stop waits for it to end.
	stop := start(t, srv.URL, dir)
	swept("my-db-12")
	must(t, stop())
	if _, err := os.Stat(kept); err != nil {
		t.Fatalf("a restarted agent removed the data of a unit still on its machine: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("the sweep removed what is no unit's storage: %v", err)
	}

	// web/0 was removed while the agent was down: its data goes once
	// the agent asks.
	f.mu.Lock()
	delete(f.placed, "web/0")
	f.mu.Unlock()
	stop = start(t, srv.URL, dir)
	swept("web-0")
	must(t, stop())
}
