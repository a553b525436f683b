package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"os"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine"
)

// Outcome is one hook run's result, decoded and checked against its
// universe as the engine checks it.
type Outcome struct {
	// Result is the decoded result.
	*charmapi.Result
	// Output is what the hook printed, byte for byte.
	Output []byte
	// Dir is the unit directory the hook ran in, where it keeps its
	// files.
	Dir string
}

// Try runs h once on u in the unit directory dir (created if missing) and
// returns its result, or the error the engine would put the unit in:
// the hook failed (exit status, panic, returned error, timeout) or its
// result breaks the contract (*engine.ResultError names the field).
func Try(ctx context.Context, h Hook, u *charmapi.Universe, dir string) (*Outcome, error) {
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	c, err := newCall(u, dir)
	if err != nil {
		return nil, err
	}
	out, err := h.Run(ctx, c)
	if err != nil {
		return nil, err
	}
	if _, err := engine.DecodeResult(u, out); err != nil {
		return nil, err
	}
	res, err := decodeResult(out)
	if err != nil {
		return nil, err
	}
	return &Outcome{Result: res, Output: out, Dir: dir}, nil
}

func decodeResult(out []byte) (*charmapi.Result, error) {
	out = bytes.TrimSpace(out)
	if len(out) == 0 {
		out = []byte("{}")
	}
	var res charmapi.Result
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// ResultChanges lists, key by key, how two results differ.
func ResultChanges(a, b *charmapi.Result) []engine.Change {
	return diffFlat(flatResult(a), flatResult(b))
}

// FormatChanges prints changes one per line, indented, for a message.
func FormatChanges(cs []engine.Change) string { return indent(changeLines(cs)) }

// NondeterminismHint says what a hook that is not a function of its
// universe must stop doing.
const NondeterminismHint = "a reconcile hook must return the same result for the same universe: no timestamps, random values, counters or map order in what it writes (sort what it lists, derive secrets from config or keep them in the unit's state)"
