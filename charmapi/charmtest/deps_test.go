package charmtest

import (
	"os/exec"
	"strings"
	"testing"
)

// maxDeps bounds the packages a charm's test builds for the kit: the
// simulator and the engine's rules, without the CUE evaluator or the
// legacy adapter (package charmdir brings those).
const maxDeps = 150

// The charm author's kit builds small: no cuelang.org package, and fewer
// than maxDeps packages in all.
func TestKitBuildsWithoutCUE(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, p := range deps {
		if strings.HasPrefix(p, "cuelang.org/") {
			t.Errorf("charmtest depends on %s; reading CUE belongs in package charmdir", p)
		}
	}
	if len(deps) >= maxDeps {
		t.Errorf("charmtest builds %d packages, want fewer than %d: %s", len(deps), maxDeps, strings.Join(deps, " "))
	}
}
