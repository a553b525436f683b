package agent

import (
	"context"

	"github.com/fixpoint/fixpoint/engine/wire"
)

// UnitResources is unitResources, for the external tests.
func (a *Agent) UnitResources(ctx context.Context, w wire.Work, charmDir, unitDir string) (map[string]string, error) {
	return a.unitResources(ctx, w, charmDir, unitDir)
}
