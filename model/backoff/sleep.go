package backoff

import (
	"context"
	"time"
)

// Sleep waits for d or until ctx ends, whichever is first; it reports
// whether the whole d passed. A retry loop sleeps through it so that
// cancelling the loop's context ends the wait at once.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
