// Package schemas holds fixpoint's CUE schemas — the environment operators
// write, charm metadata, and the universe and result a hook reads and
// writes — and the Go code that loads and checks files against them.
//
// The .cue files are the one source of truth: they are embedded in the
// binary, their field comments are shown next to errors, and users may
// import them as "fixpoint.dev/schemas".
package schemas

import "embed"

// FS holds the schema files (environment.cue, charm.cue, universe.cue,
// result.cue), all in CUE package schemas.
//
//go:embed *.cue
var FS embed.FS

// ImportPath is the CUE import path under which user files can import the
// shipped schemas: import "fixpoint.dev/schemas".
const ImportPath = "fixpoint.dev/schemas"
