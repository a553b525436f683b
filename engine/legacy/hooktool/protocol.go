// Package hooktool is the client side of the Juju hook tools (relation-get,
// relation-set, config-get, ...) and the wire protocol they speak to the
// old-hook adapter in engine/legacy, which serves them.
//
// It is a leaf: it imports the standard library only, and no package that
// needs the network stack's cgo resolver, so that cmd/fixpoint-hook, the
// program behind the tools, is a small static binary whose start costs
// little more than a C program's. A hook that reads N remote units spawns
// a tool N times; the tools' start-up time is what an old charm pays most.
// For the same reason the client avoids os, fmt, encoding/json and time,
// whose initialisation and reflection every call would pay (about a
// quarter of a call's CPU, BenchmarkToolCall in engine/legacy): it speaks
// JSON by hand (wire.go) and, on Linux, uses plain system calls.
package hooktool

// Environment variables that connect a hook tool to the run serving it.
// Juju's own JUJU_AGENT_SOCKET_ADDRESS is opaque to charms; these are too.
const (
	// EnvSocket is the path of the run's unix socket.
	EnvSocket = "FIXPOINT_HOOK_SOCKET"
	// EnvToken authenticates a tool to the run that started its hook.
	EnvToken = "FIXPOINT_HOOK_TOKEN"
	// EnvContext names the hook run a tool call belongs to; calls from a
	// hook that has finished are refused.
	EnvContext = "JUJU_CONTEXT_ID"
	// EnvUnitDir is the unit's own directory, where a charm may keep files
	// (hooks run in the charm directory, as in Juju).
	EnvUnitDir = "FIXPOINT_UNIT_DIR"
)

// ProtocolVersion changes whenever Request or Response change shape. The
// agent asks a fixpoint-hook it finds on disk for it (fixpoint-hook
// --protocol) and uses that program only when it matches, so that a stale
// install beside a newer fixpoint is not trusted to speak the protocol.
const ProtocolVersion = 3

// MaxRequest bounds one tool request (a relation-set --file included).
const MaxRequest = 16 << 20

// MaxResponse bounds what the client reads back: a tool's output is the
// unit's view of the universe, far below this.
const MaxResponse = 64 << 20

// Request is one hook-tool invocation, sent as one JSON object.
type Request struct {
	Token   string   `json:"token"`
	Context string   `json:"context"`
	Tool    string   `json:"tool"`
	Args    []string `json:"args"`
	// File is what relation-set --file named (or stdin for "-"), read by
	// the client, whose working directory and permissions are the hook's.
	File *string `json:"file,omitempty"`
}

// Response is what the tool prints and its exit code, how long the
// caller may keep it in place of asking again (Keep), and the run's write
// generation when it was answered (Gen).
type Response struct {
	Code   int    `json:"code"`
	Stdout string `json:"stdout,omitempty"`
	Stderr string `json:"stderr,omitempty"`
	Keep   int    `json:"keep,omitempty"`
	// Gen counts the writes the run took so far, from any process of the
	// hook: an answer kept until a write holds while Gen stands still.
	Gen uint64 `json:"gen,omitempty"`
}

// How long a caller may keep an answer, in the same hook context, for the
// same tool and arguments (Response.Keep). The server, which knows what
// each tool reads, says it; fixpoint-sh keeps what it may.
const (
	// KeepNot is for an answer that must be asked for again: a write, a
	// failure, a log line.
	KeepNot = 0
	// KeepUntilWrite is for a read of what the hook's own tool calls may
	// change (its unit's or its service's settings, leader data, status,
	// ports): the same answer until the run's write generation (Gen)
	// moves, whichever process of the hook wrote.
	KeepUntilWrite = 1
	// KeepForHook is for a read of the universe the run began with
	// (config, other units' settings, members, leadership), which no
	// tool call changes: the same answer for the whole hook.
	KeepForHook = 2
)

// Exit codes of the hook tools, as Juju's: 2 for a command line the tool
// cannot accept, 1 for a call that failed.
const (
	ExitFailed = 1
	ExitUsage  = 2
)
