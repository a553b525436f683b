package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"
)

// The register model accepts a read of the last acknowledged write and
// refuses a read of the value it overwrote.
func TestRegisterModel(t *testing.T) {
	write := porcupine.Operation{ClientId: 0, Input: regIn{Write: true, V: 1001}, Output: regOut{}, Call: 0, Return: 10}
	read := func(v int) porcupine.Operation {
		return porcupine.Operation{ClientId: 1, Input: regIn{Service: "db"}, Output: regOut{V: v}, Call: 20, Return: 30}
	}
	if !porcupine.CheckOperations(registerModel, []porcupine.Operation{write, read(1001)}) {
		t.Error("a read of the acknowledged write is refused")
	}
	if porcupine.CheckOperations(registerModel, []porcupine.Operation{write, read(initialValue)}) {
		t.Error("a read of the overwritten value after the write was acknowledged is accepted")
	}
	unknown := write
	unknown.Output, unknown.Return = regOut{Unknown: true}, 1<<62
	for _, v := range []int{initialValue, 1001} {
		if !porcupine.CheckOperations(registerModel, []porcupine.Operation{unknown, read(v)}) {
			t.Errorf("a write never answered does not allow reading %d", v)
		}
	}
}

// An acknowledged write the state holds at another index, or not at all
// while the state still remembers ids that old, is lost; one older than
// every id it remembers is not counted.
func TestLostWrites(t *testing.T) {
	st := &replicatedState{
		Requests:   map[string]uint64{"old": 10, "a": 12, "b": 20},
		RequestLog: []string{"old", "a", "b"},
	}
	acked := []ack{{ID: "a", Index: 12}, {ID: "b", Index: 19}, {ID: "gone", Index: 5}, {ID: "c", Index: 15}}
	lost, checked, missing := lostWrites(st, acked)
	if lost != 2 || checked != 3 || len(missing) != 2 {
		t.Fatalf("lost %d, checked %d, missing %v; want 2 lost (b at another index, c absent), 3 checked", lost, checked, missing)
	}
}

// The probe notes a hook that begins while its unit's previous hook
// process still runs, and nothing when that process has ended.
func TestProbeSeesOverlap(t *testing.T) {
	dir := t.TempDir()
	from, to, runs := filepath.Join(dir, "from"), filepath.Join(dir, "to"), filepath.Join(dir, "runs")
	for _, d := range []string{filepath.Join(from, "hooks"), runs} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(from, "hooks", "start"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := copyCharm(from, to, runs); err != nil {
		t.Fatal(err)
	}
	hook := func() {
		t.Helper()
		cmd := exec.Command("/bin/sh", filepath.Join(to, "hooks", "start"))
		cmd.Env = append(os.Environ(), "JUJU_UNIT_NAME=db/0", "JUJU_HOOK_NAME=start")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("hook: %v: %s", err, out)
		}
	}
	overlaps := func() string {
		b, _ := os.ReadFile(filepath.Join(runs, "overlaps"))
		return string(b)
	}
	hook()
	hook() // the first one has ended
	if got := overlaps(); got != "" {
		t.Fatalf("overlap noted after hooks that ran one after the other: %q", got)
	}
	// A previous hook that still runs: a live process recorded as the
	// unit's current one.
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = sleeper.Process.Kill()
		_ = sleeper.Wait()
	}()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", sleeper.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Fields(string(stat))[21]
	cur := fmt.Sprintf("%d %s install\n", sleeper.Process.Pid, start)
	if err := os.WriteFile(filepath.Join(runs, "db-0.cur"), []byte(cur), 0o644); err != nil {
		t.Fatal(err)
	}
	hook()
	if got := overlaps(); !strings.Contains(got, "db/0 start began while install") {
		t.Fatalf("overlaps = %q, want the start hook noted", got)
	}
	got, runsSeen, err := hookOverlaps(&environment{runs: runs})
	if err != nil || len(got) != 1 || runsSeen != 3 {
		t.Fatalf("hookOverlaps = %v, %d runs, %v; want 1 overlap in 3 runs", got, runsSeen, err)
	}
}
