package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// TestEnvironmentPlacedByLabels: an environment placed on zone=b waits
// while only up's own machine (no labels) is registered, then lands
// wholly on the agent started with --label zone=b; an agent with a
// malformed label is refused before it registers.
func TestEnvironmentPlacedByLabels(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	up := startProc(t, "up", "-f", repo("testdata", "envs", "placed.cue"), "--data-dir", data)
	rafttest.Eventually(t, 2*time.Minute, "up serving with db's units unplaced", func() error {
		st := statusOf(t, data)
		if st == nil || st.Machines["local"] == nil || len(st.Units) != 2 {
			return errors.New(up.out.String())
		}
		for name, u := range st.Units {
			if u.Machine != "" {
				t.Fatalf("%s placed on %s, which has no zone=b label", name, u.Machine)
			}
		}
		return nil
	})
	addr := readEndpoint(t, data)
	join := readFile(t, filepath.Join(data, joinTokenFile))
	if r := fixpoint(t, time.Minute, "agent", "--controller", addr, "--machine", "m9", "--data-dir", t.TempDir(), "--token", join, "--label", "zone=-b"); r.code == 0 || !strings.Contains(r.stderr, "--label: label zone: label value \"-b\" must start and end") {
		t.Fatalf("agent with a malformed label: %d %s", r.code, r.stderr)
	}
	m2 := startProc(t, "agent", "--controller", addr, "--machine", "m2", "--data-dir", t.TempDir(), "--address", "127.0.0.1", "--token", join, "--label", "zone=b", "--label", "disk=ssd")
	rafttest.Eventually(t, 3*time.Minute, "db converged on m2", func() error {
		st := statusOf(t, data)
		if st == nil || !st.Converged || len(st.Units) != 2 {
			return errors.New(m2.out.String() + jsonString(st))
		}
		for name, u := range st.Units {
			if u.Machine != "m2" {
				t.Fatalf("%s is on %q; the environment's placement admits only m2 (zone=b)", name, u.Machine)
			}
		}
		return nil
	})
	st := statusOf(t, data)
	if l := st.Machines["m2"].Labels; l["zone"] != "b" || l["disk"] != "ssd" || len(st.Machines["local"].Labels) != 0 {
		t.Errorf("status's machines: %s", jsonString(st.Machines))
	}
	if r := fixpoint(t, time.Minute, "status", "--data-dir", data); r.code != 0 || !strings.Contains(r.stdout, "machine m2: labels disk=ssd,zone=b") {
		t.Errorf("status does not show m2's labels: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := fixpoint(t, time.Minute, "export", "--data-dir", data); r.code != 0 || !strings.Contains(r.stdout, "zone") {
		t.Errorf("export does not carry the environment's placement: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestVetPlacementProblemsAtTheirLines: vet names each problem of an
// environment's placement, and a service pinned outside it, at its
// file:line:col.
func TestVetPlacementProblemsAtTheirLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "env.cue")
	writeFiles(t, dir, map[string]string{"env.cue": `apiVersion: "fixpoint/v1"
name: "shop"
placement: {
	machines: ["m1", "m1"]
}
services: db: {charm: "` + repo("testdata", "charms", "db") + `", placement: ["m2"]}
`})
	r := fixpoint(t, time.Minute, "vet", file)
	if r.code == 0 {
		t.Fatalf("vet accepted a bad placement:\n%s", r.stdout)
	}
	for _, want := range []string{
		file + ":4:19: placement.machines.1: machine m1 is named twice",
		file + ":6:", "services.db.placement.0: machine m2 is outside the environment's placement",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("vet's stderr lacks %q:\n%s", want, r.stderr)
		}
	}
}
