package simdir

import (
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/engine/sim"
)

// TestDeployOfNoCharm: a directory that holds no charm is reported by
// Simulate, naming the service.
func TestDeployOfNoCharm(t *testing.T) {
	env := NewEnv("x")
	env.Deploy("server", t.TempDir())
	if _, err := env.Simulate(t.Context(), sim.Options{}); err == nil || !strings.Contains(err.Error(), "service server") || !strings.Contains(err.Error(), "is not a charm") {
		t.Errorf("no charm.cue: %v", err)
	}
}
