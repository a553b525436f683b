// Package wire is the protocol between the controller and its agents:
// the work an agent is handed (a unit's universe, or an action to run on
// it) and the report it sends back. The controller, engine/api,
// engine/agent and engine/legacy import it; it imports only charmapi, so
// none of them imports the store to speak to another. Errors on the way
// travel in package model/fault's envelope.
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
	// Action, when set, says to run that operation on the universe
	// instead of the unit's hooks.
	Action *Action `json:"action,omitempty"`
	// Env names the unit's environment, "" (left out) for the default
	// one; EnvUUID is its replicated uuid, when it has one. Work of an
	// environment other than the default goes only to an agent whose
	// poll says it keeps each environment's units apart (engine/fleet).
	Env     string `json:"env,omitempty"`
	EnvUUID string `json:"env_uuid,omitempty"`
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
	// Env is the environment of the work reported on (Work.Env): ""
	// for the default one.
	Env string `json:"env,omitempty"`
}

// Action is an operation handed to an agent with its unit's universe: a
// charm action, or (Name "exec") a command to run in the hook context.
type Action struct {
	ID     int            `json:"id"`
	Name   string         `json:"name"`
	Params map[string]any `json:"params,omitempty"`
	Exec   string         `json:"exec,omitempty"`
}

// ActionReport is what an agent says about one action's run. Output is
// what it wrote through the hook tools (a result object, as a hook's);
// Results, Log and Message are what action-set, action-log and
// action-fail said.
type ActionReport struct {
	ID      int             `json:"id"`
	Unit    string          `json:"unit"`
	Output  json.RawMessage `json:"output,omitempty"`
	Failed  bool            `json:"failed,omitempty"`
	Message string          `json:"message,omitempty"`
	Results map[string]any  `json:"results,omitempty"`
	Log     []ActionLog     `json:"log,omitempty"`
	// Env is the environment of the operation's unit (Work.Env): ""
	// (left out) for the default one.
	Env string `json:"env,omitempty"`
}

// ActionLog is one action-log line with its time (unix nanoseconds).
type ActionLog struct {
	Time    int64  `json:"time"`
	Message string `json:"message"`
}
