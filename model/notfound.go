package model

import "errors"

// ErrNotFound is what a lookup of something the state does not hold is
// (errors.Is). The error envelope (model/fault) names it not_found and
// decodes it back to this value, so a lookup in the engine and an
// answer three hops away share one sentinel.
var ErrNotFound = errors.New("not found")
