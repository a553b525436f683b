package raftstore

import (
	"context"
	"fmt"

	"github.com/fixpoint/fixpoint/model"
)

// admitCommand judges a command a client posted to /v1/raft/apply on the
// applied state before anything is proposed (model.AdmitOn), as the API
// judges its own: a refusal answers 409 and a no-op 200, and neither
// reaches the log. Commands forwarded by another node were judged there.
func (s *Store) admitCommand(ctx context.Context, cmd *model.Command) (*model.Response, error) {
	bindRequest(cmd)
	desired, err := cmd.Check()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	noop, err := model.AdmitClusterOn(ctx, s, cmd, desired)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	return noop, nil
}
