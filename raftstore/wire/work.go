package wire

import (
	"encoding/json"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
)

// Work is one stale unit handed to an agent.
type Work struct {
	Unit     string             `json:"unit"`
	Hash     string             `json:"hash"`
	Charm    string             `json:"charm"`
	Legacy   bool               `json:"legacy,omitempty"`
	Universe *charmapi.Universe `json:"universe"`
	// Environment, Principal, Status and Ports are what old hooks read
	// back through the hook tools beyond the universe.
	Environment string           `json:"environment,omitempty"`
	Principal   string           `json:"principal,omitempty"`
	Status      *charmapi.Status `json:"status,omitempty"`
	Ports       []string         `json:"ports,omitempty"`
	// UniverseJSON is Universe encoded: by the controller when it built
	// the universe ahead of the claim (the answer then sends these
	// bytes), and on the agent's side as the server sent it
	// (api.Client.Claim), which the agent hands to the hook as it is
	// rather than encoding Universe again. Nil when neither did.
	UniverseJSON json.RawMessage `json:"-"`
}

// Report is what an agent says about one hook run.
type Report struct {
	Unit string `json:"unit"`
	Hash string `json:"hash"`
	// Output is the hook's stdout: the result JSON, carried as JSON (not
	// base64) so that the agent's report reads as what the hook printed.
	Output json.RawMessage `json:"output,omitempty"`
	// Error is set when the hook failed (exit status, timeout, ...).
	Error    string        `json:"error,omitempty"`
	Duration time.Duration `json:"duration,omitempty"`
	// Stderr is the tail of the hook's standard error, for the history.
	Stderr string `json:"stderr,omitempty"`
}
