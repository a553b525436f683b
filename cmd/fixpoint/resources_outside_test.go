package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A resource file outside the environment file's directory — named by
// an absolute path, by "../" or through a symlink that leads out — is
// refused by vet, plan and apply at its line, saying how to allow it,
// before anything is read or sent; --allow-outside lets it in, and vet
// and plan name it.
func TestResourcesOutsideTheEnvironmentNeedAnOptIn(t *testing.T) {
	t.Parallel()
	dir, elsewhere := t.TempDir(), t.TempDir()
	secret := filepath.Join(elsewhere, "secret.txt")
	if err := os.WriteFile(secret, []byte("not for the control plane\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	up, err := filepath.Rel(dir, secret)
	if err != nil || !strings.HasPrefix(up, "..") {
		t.Fatalf("relative path to the secret: %q, %v", up, err)
	}
	real, err := filepath.EvalSymlinks(secret)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, path string }{
		{"absolute", secret},
		{"dot-dot", up},
		{"symlink", "./link.txt"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := filepath.Join(dir, c.name+".cue")
			body := fmt.Sprintf(`apiVersion: "fixpoint/v1"
name: "res"
services: "res-classic": {
	charm: %q
	resources: payload: %q
}
`, repo("testdata", "charms", "res-classic"), c.path)
			if err := os.WriteFile(env, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			want := c.name + `.cue:5:13: services."res-classic".resources.payload: resource payload: `
			for _, args := range [][]string{
				{"vet", "-f", env},
				{"plan", "-f", env, "--controller", "http://127.0.0.1:1", "--token", "x"},
				{"apply", "-f", env, "--controller", "http://127.0.0.1:1", "--token", "x"},
			} {
				r := fixpoint(t, time.Minute, args...)
				if r.code != exitFailed || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "outside the environment's directory") ||
					!strings.Contains(r.stderr, "--allow-outside "+real) {
					t.Errorf("%s: exit %d; want 1 with %q…, outside, --allow-outside %s:\n%s%s", args[0], r.code, want, real, r.stdout, r.stderr)
				}
			}
			r := fixpoint(t, time.Minute, "vet", "-f", env, "--allow-outside", elsewhere)
			if r.code != 0 || !strings.Contains(r.stderr, "resource payload of res-classic reads "+real) {
				t.Errorf("vet --allow-outside %s: exit %d; want 0, naming the file:\n%s%s", elsewhere, r.code, r.stdout, r.stderr)
			}
			// plan names it before it asks the control plane (here one
			// that does not answer).
			r = fixpoint(t, time.Minute, "plan", "-f", env, "--allow-outside", real, "--controller", "http://127.0.0.1:1", "--token", "x")
			if !strings.Contains(r.stdout, "resource payload of res-classic reads "+real+", outside the environment's directory") {
				t.Errorf("plan --allow-outside %s: exit %d; want the file named:\n%s%s", real, r.code, r.stdout, r.stderr)
			}
		})
	}
}
