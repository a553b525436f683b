package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// depsImporting lists, for every package pkg depends on (itself
// included), the ones that import target.
func depsImporting(t *testing.T, pkg, target string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	var importers []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) > 0 && slices.Contains(fields[1:], target) {
			importers = append(importers, fields[0])
		}
	}
	return importers
}

// The binary must not carry test helpers. hashicorp/raft's own testing.go
// (a non-test file in every release from v1.6.0 to v1.8.0) imports package
// testing; that is the one importer allowed, so that any of ours fails here.
func TestBinaryLinksNoTestHelpersOfOurs(t *testing.T) {
	got := depsImporting(t, ".", "testing")
	if len(got) > 1 || (len(got) == 1 && got[0] != "github.com/hashicorp/raft") {
		t.Fatalf("packages of the fixpoint binary that import testing: %v; only github.com/hashicorp/raft may", got)
	}
}

// charmapi is what charm authors import: it must not drag the engine in.
func TestCharmAPIImportsNothingOfTheModule(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../../charmapi").Output()
	if err != nil {
		t.Fatalf("go list -deps charmapi: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/fixpoint/fixpoint/") && p != "github.com/fixpoint/fixpoint/charmapi" {
			t.Errorf("charmapi depends on %s", p)
		}
	}
}
