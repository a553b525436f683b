package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/model"
)

// TestCharmTestResources: `charm test -f` gives the units the resources
// the environment file names, as up does: testdata's res-classic (and
// ops-res, through ops's model.resources, when the ops framework is
// there) show the payload's first line, and the report its digest. A
// resource the environment does not provide fails resource-get with
// Juju's error, under -f as without it; --resource provides one to
// charms named directly.
func TestCharmTestResources(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	content := "first payload\nline two\n"
	write(t, filepath.Join(dir, "payload.txt"), content)
	sum := sha256.Sum256([]byte(content))
	digest := model.ShortHash(hex.EncodeToString(sum[:]))
	classic := repo("testdata", "charms", "res-classic")
	opsDir := ""
	if fw := opsFrameworkDir(); fw != "" {
		opsDir = packOps(t, fw, "ops-res", filepath.Join(dir, "ops-res"))
	} else {
		t.Log("the ops framework is not beside the checkout: ops-res is not run")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: \"fixpoint/v1\"\nname: \"res\"\nservices: {\n")
	fmt.Fprintf(&b, "\t\"res-classic\": {charm: %q, units: 2, resources: payload: \"./payload.txt\"}\n", classic)
	if opsDir != "" {
		fmt.Fprintf(&b, "\t\"res-ops\": {charm: %q, units: 1, resources: payload: \"payload.txt\"}\n", opsDir)
	}
	b.WriteString("}\n")
	env := filepath.Join(dir, "res.cue")
	write(t, env, b.String())

	r := fixpoint(t, 10*time.Minute, "charm", "test", "-f", env, "--schedules", "3")
	if r.code != 0 {
		t.Fatalf("charm test exited %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	wantAll(t, "charm test -f with a resource", r.stdout, "resources: res-classic payload "+digest)
	units := []string{"res-classic/0", "res-classic/1"}
	if opsDir != "" {
		wantAll(t, "charm test -f with an ops charm's resource", r.stdout, "res-ops payload "+digest)
		units = append(units, "res-ops/0")
	}
	for _, u := range units {
		if got := finalStatus(r.stdout, u); got != "active: payload first payload" {
			t.Errorf("%s's status %q; want the payload's first line:\n%s", u, got, r.stdout)
		}
	}

	juju := `ERROR could not download resource: resource "payload" not found`
	bare := filepath.Join(dir, "bare.cue")
	write(t, bare, fmt.Sprintf("apiVersion: \"fixpoint/v1\"\nname: \"res\"\nservices: \"res-classic\": {charm: %q, units: 1}\n", classic))
	r = fixpoint(t, 5*time.Minute, "charm", "test", "-f", bare, "--schedules", "1")
	if r.code != exitUnitErr || !strings.Contains(r.stdout, juju) || strings.Contains(r.stdout, "resources:") {
		t.Errorf("charm test -f without the resource exited %d; want %d and %q:\n%s%s", r.code, exitUnitErr, juju, r.stdout, r.stderr)
	}

	r = fixpoint(t, 5*time.Minute, "charm", "test", classic, "--units", "1", "--schedules", "1")
	if r.code != exitUnitErr || !strings.Contains(r.stdout, juju) {
		t.Errorf("charm test DIR exited %d; want %d and %q:\n%s%s", r.code, exitUnitErr, juju, r.stdout, r.stderr)
	}
	r = fixpoint(t, 5*time.Minute, "charm", "test", classic, "--units", "1", "--schedules", "2",
		"--resource", "res-classic:payload="+filepath.Join(dir, "payload.txt"))
	if r.code != 0 {
		t.Fatalf("charm test --resource exited %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	wantAll(t, "charm test --resource", r.stdout, "resources: res-classic payload "+digest)
	if got := finalStatus(r.stdout, "res-classic/0"); got != "active: payload first payload" {
		t.Errorf("res-classic/0's status %q; want the payload's first line:\n%s", got, r.stdout)
	}

	for _, tc := range []struct{ args, want string }{
		{"res-classic:nope=" + filepath.Join(dir, "payload.txt"), `charm res-classic declares no resource "nope" (it declares: extra, payload)`},
		{"res-classic:payload=" + filepath.Join(dir, "nothere"), "does not exist; the path is relative to the working directory"},
		{"web:payload=x", `no service web; the services are res-classic`},
		{"res-classic=payload", "want SERVICE:NAME=PATH"},
	} {
		r = fixpoint(t, time.Minute, "charm", "test", classic, "--schedules", "1", "--resource", tc.args)
		if r.code != exitFailed || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("--resource %s exited %d; want %d and %q:\n%s", tc.args, r.code, exitFailed, tc.want, r.stderr)
		}
	}
	r = fixpoint(t, time.Minute, "charm", "test", "-f", env, "--resource", "res-classic:payload=x")
	if r.code != exitFailed || !strings.Contains(r.stderr, "--resource is for charms named without -f") {
		t.Errorf("--resource with -f exited %d:\n%s", r.code, r.stderr)
	}
}

// write writes a test's file.
func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// finalStatus is unit's status as `charm test` prints it at the fixed
// point, or "".
func finalStatus(out, unit string) string {
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == unit {
			return strings.Join(f[1:], " ")
		}
	}
	return ""
}
