package schedule

import "github.com/fixpoint/fixpoint/model/backoff"

// Backoff spaces a failed unit's retries.
type Backoff = backoff.Policy

// DefaultBackoff is DESIGN's hook retry: 5 s doubling to 5 min.
var DefaultBackoff = backoff.Hooks
