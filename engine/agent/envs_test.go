package agent_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/agent"
	"github.com/fixpoint/fixpoint/engine/legacy"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// twoEnvs is work of web/0 in the default environment "shop" and web/0
// in environment "dev": two units of one name on one machine.
func twoEnvs(life string) string {
	uni := func(storage string) string {
		return fmt.Sprintf(`{"service": "web", "unit": "web/0", "life": %q, "relations": [], "storage": [{"id": "data/%s", "name": "data", "kind": "filesystem"}]}`, life, storage)
	}
	return fmt.Sprintf(`[{"unit": "web/0", "hash": "h1", "charm": "CHARM", "environment": "shop", "universe": %s},
{"unit": "web/0", "hash": "h2", "charm": "CHARM", "environment": "dev", "env": "dev", "env_uuid": "6f1d3c52-8a7b-4c1e-9d2f-0a1b2c3d4e5f", "universe": %s}]`, uni("0"), uni("1"))
}

// reports waits until n reports arrived, in any batching, and returns
// them by unit key.
func (f *fakePlane) reportsByKey(t *testing.T, n int) map[string]wire.Report {
	t.Helper()
	out := map[string]wire.Report{}
	deadline := time.After(time.Minute)
	for len(out) < n {
		select {
		case reps := <-f.reports:
			for _, raw := range reps {
				var rep wire.Report
				must(t, json.Unmarshal(raw, &rep))
				out[wire.UnitKey(rep.Env, rep.Unit)] = rep
			}
		case <-deadline:
			t.Fatalf("%d reports within a minute, want %d: %v", len(out), n, out)
		}
	}
	return out
}

// Two environments' web/0 on one machine run side by side, each in its
// own directory (the default one's where it always was), with its own
// model name and uuid in its hook environment and universe, its own
// storage, and its report naming its environment; the agent's polls say
// it keeps environments apart.
func TestUnitsOfEachEnvironmentKeepApart(t *testing.T) {
	f, srv := newFakePlane(t)
	f.batch = twoEnvs("alive")
	dir := t.TempDir()
	stop := start(t, srv.URL, dir)
	reps := f.reportsByKey(t, 2)
	must(t, stop())
	if reps["web/0"].Error != "" || reps["dev:web/0"].Error != "" || reps["web/0"].Hash != "h1" || reps["dev:web/0"].Hash != "h2" {
		t.Fatalf("reports %+v; want web/0 of the default environment and of dev, each with its own hash", reps)
	}
	devUUID := "6f1d3c52-8a7b-4c1e-9d2f-0a1b2c3d4e5f"
	for _, c := range []struct{ unitDir, storage, name, uuid string }{
		{filepath.Join(dir, "units", "web-0"), filepath.Join(dir, "storage", "web-0", "data", "0"), "shop", legacy.ModelUUID("shop")},
		{filepath.Join(dir, "envs", "dev", "units", "web-0"), filepath.Join(dir, "envs", "dev", "storage", "web-0", "data", "1"), "dev", devUUID},
	} {
		if got := strings.TrimSpace(readFile(t, filepath.Join(c.unitDir, "model.txt"))); got != c.name+" "+c.uuid {
			t.Errorf("%s: the hook saw JUJU_MODEL_NAME and JUJU_MODEL_UUID %q; want %q", c.unitDir, got, c.name+" "+c.uuid)
		}
		var u charmapi.Universe
		must(t, json.Unmarshal([]byte(readFile(t, filepath.Join(c.unitDir, "universe.json"))), &u))
		if u.Env == nil || u.Env.Name != c.name || u.Env.UUID != c.uuid {
			t.Errorf("%s: the universe's env is %+v; want %s %s", c.unitDir, u.Env, c.name, c.uuid)
		}
		if len(u.Storage) != 1 || u.Storage[0].Location != c.storage {
			t.Errorf("%s: storage %+v; want it at %s", c.unitDir, u.Storage, c.storage)
		}
		if _, err := os.Stat(c.storage); err != nil {
			t.Errorf("storage of %s: %v", c.unitDir, err)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, q := range f.polls {
		if !strings.Contains(q, "envs=1") {
			t.Errorf("a work poll without envs=1: %s", q)
		}
	}
}

// The heartbeat names each running unit with its environment: the
// control plane's gone for dev's web/0 ends that run alone, and the
// default environment's web/0, of the same name, runs on and reports.
func TestHeartbeatNamesEachUnitsEnvironment(t *testing.T) {
	f, srv := newFakePlane(t)
	f.batch = twoEnvs("alive")
	f.gone["dev:web/0"] = true
	dir := t.TempDir()
	// dev's hook runs until it is ended.
	must(t, os.MkdirAll(filepath.Join(dir, "charms"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "charms", "block-dev"), nil, 0o644))
	stop := startConfig(t, srv.URL, agent.Config{Machine: "m1", Address: "10.0.0.1", DataDir: dir, Concurrency: 2,
		Poll: 50 * time.Millisecond, Heartbeat: 20 * time.Millisecond})
	reps := f.reportsByKey(t, 1)
	if _, ok := reps["web/0"]; !ok || len(reps) != 1 {
		t.Fatalf("reports %v; want the default environment's web/0 alone", reps)
	}
	rafttest.Eventually(t, time.Minute, "dev's web/0 ended", func() error {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, hb := range f.beats {
			if slices.Contains(hb.Running, "dev:web/0") {
				if last := f.beats[len(f.beats)-1]; len(last.Running) != 0 {
					return fmt.Errorf("the last heartbeat still runs %v", last.Running)
				}
				return nil
			}
		}
		return fmt.Errorf("no heartbeat named dev:web/0 running: %+v", f.beats)
	})
	must(t, stop())
	select {
	case reps := <-f.reports:
		t.Errorf("an ended run was reported: %s", reps)
	default:
	}
}

// Storage kept by an environment's unit is asked about by unit key and
// released for that unit alone; an environment whose unit ran its dying
// hooks is asked about on the next heartbeats, and its directory goes
// once the control plane says it is gone, the default environment's
// files staying.
func TestRemovedEnvironmentsDirectoryGoes(t *testing.T) {
	f, srv := newFakePlane(t)
	f.batch = twoEnvs("alive")
	dir := t.TempDir()
	stop := start(t, srv.URL, dir)
	f.reportsByKey(t, 2)
	must(t, stop())

	// Restarted, the agent asks about the storage of both web/0s by key;
	// dev's is released alone.
	f.mu.Lock()
	f.idle = true
	f.placed = map[string]bool{"web/0": true}
	f.mu.Unlock()
	stop = startConfig(t, srv.URL, agent.Config{Machine: "m1", Address: "10.0.0.1", DataDir: dir, Poll: 50 * time.Millisecond, Heartbeat: time.Hour})
	rafttest.Eventually(t, time.Minute, "dev's storage released", func() error {
		if _, err := os.Stat(filepath.Join(dir, "envs", "dev", "storage", "web-0")); !os.IsNotExist(err) {
			return fmt.Errorf("dev's web/0 keeps its storage: %v", err)
		}
		return nil
	})
	must(t, stop())
	if _, err := os.Stat(filepath.Join(dir, "storage", "web-0", "data", "0")); err != nil {
		t.Errorf("the default environment's web/0 lost its storage: %v", err)
	}
	f.mu.Lock()
	var kept []string
	for _, hb := range f.beats {
		kept = append(kept, hb.Kept...)
	}
	f.mu.Unlock()
	sort.Strings(kept)
	if len(kept) < 2 || !slices.Contains(kept, "web/0") || !slices.Contains(kept, "dev:web/0") {
		t.Errorf("kept units asked about: %v; want web/0 and dev:web/0", kept)
	}

	// dev's web/0 runs its dying hooks; dev is then gone.
	f.mu.Lock()
	f.idle, f.handed = false, false
	f.batch = `[{"unit": "web/0", "hash": "h3", "charm": "CHARM", "environment": "dev", "env": "dev", "env_uuid": "6f1d3c52-8a7b-4c1e-9d2f-0a1b2c3d4e5f", "universe": {"service": "web", "unit": "web/0", "life": "dying", "relations": []}}]`
	f.goneEnvs["dev"] = true
	f.mu.Unlock()
	f.forget()
	stop = startConfig(t, srv.URL, agent.Config{Machine: "m1", Address: "10.0.0.1", DataDir: dir, Poll: 50 * time.Millisecond, Heartbeat: 20 * time.Millisecond})
	if reps := f.reportsByKey(t, 1); reps["dev:web/0"].Error != "" {
		t.Fatalf("dev's dying run: %+v", reps)
	}
	rafttest.Eventually(t, time.Minute, "dev's directory removed", func() error {
		if _, err := os.Stat(filepath.Join(dir, "envs", "dev")); !os.IsNotExist(err) {
			return fmt.Errorf("envs/dev is still there: %v", err)
		}
		return nil
	})
	must(t, stop())
	if _, err := os.Stat(filepath.Join(dir, "units", "web-0", "model.txt")); err != nil {
		t.Errorf("the default environment's web/0 lost its directory: %v", err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	must(t, err)
	return string(b)
}
