package agent_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/agent"
	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/engine/wire"
)

// TestUnitResources: the agent fetches a resource file once per digest,
// checks its digest, keeps it read-only and links it into each unit's
// directory as resources/<name>/<filename>; a unit whose service lost its
// resources loses the files; a file that arrives with another digest, or
// a name the charm does not declare, fails the run and caches nothing.
func TestUnitResources(t *testing.T) {
	content := []byte("payload v1\n")
	sum := sha256.Sum256(content)
	digest := hex.EncodeToString(sum[:])
	bad := strings.Repeat("b", 64)
	var mu sync.Mutex
	fetches := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := strings.TrimPrefix(r.URL.Path, "/v1/resources/")
		mu.Lock()
		fetches[h]++
		mu.Unlock()
		w.Write(content) // under bad too: the agent must notice
	}))
	t.Cleanup(srv.Close)
	data := t.TempDir()
	charmDir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(charmDir, "charm.cue"), []byte(`name: "web"
resources: payload: {type: "file", filename: "payload.txt"}
`), 0o644))
	a := agent.New(api.NewClient([]string{srv.URL}, "token", nil), agent.Config{Machine: "m1", DataDir: data})
	work := func(unit string, res map[string]string) wire.Work {
		return wire.Work{Unit: unit, Charm: "c1", Universe: &charmapi.Universe{Unit: unit, Resources: res}}
	}
	ctx := context.Background()
	dirs := map[string]string{"web/0": t.TempDir(), "web/1": t.TempDir()}
	for unit, dir := range dirs {
		paths, err := a.UnitResources(ctx, work(unit, map[string]string{"payload": digest}), charmDir, dir)
		if err != nil {
			t.Fatalf("%s: %v", unit, err)
		}
		want := filepath.Join(dir, "resources", "payload", "payload.txt")
		if paths["payload"] != want {
			t.Errorf("%s: paths %v; want payload at %s", unit, paths, want)
		}
		if got, err := os.ReadFile(want); err != nil || string(got) != string(content) {
			t.Errorf("%s: %q, %v", unit, got, err)
		}
	}
	mu.Lock()
	n := fetches[digest]
	mu.Unlock()
	if n != 1 {
		t.Errorf("the file was fetched %d times for two units; want once", n)
	}
	if fi, err := os.Stat(filepath.Join(data, "resources", digest)); err != nil || fi.Mode().Perm()&0o222 != 0 {
		t.Errorf("the cached file: %v, %v; want it read-only", fi.Mode(), err)
	}

	if _, err := a.UnitResources(ctx, work("web/0", nil), charmDir, dirs["web/0"]); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dirs["web/0"], "resources")); !os.IsNotExist(err) {
		t.Errorf("web/0 keeps resources its service no longer has: %v", err)
	}

	_, err := a.UnitResources(ctx, work("web/1", map[string]string{"payload": bad}), charmDir, dirs["web/1"])
	if err == nil || !strings.Contains(err.Error(), "arrived with digest") {
		t.Errorf("a file of another digest: %v", err)
	}
	if _, serr := os.Stat(filepath.Join(data, "resources", bad)); !os.IsNotExist(serr) {
		t.Errorf("a file of another digest was cached: %v", serr)
	}
	_, err = a.UnitResources(ctx, work("web/1", map[string]string{"other": digest}), charmDir, dirs["web/1"])
	if err == nil || !strings.Contains(err.Error(), `resource "other" is not declared`) {
		t.Errorf("an undeclared resource: %v", err)
	}
}
