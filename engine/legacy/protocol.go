package legacy

// Environment variables that connect a hook tool to the Run serving it.
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

// maxRequest bounds one tool request (a relation-set --file included).
const maxRequest = 16 << 20

// request is one hook-tool invocation, sent as one JSON object.
type request struct {
	Token   string   `json:"token"`
	Context string   `json:"context"`
	Tool    string   `json:"tool"`
	Args    []string `json:"args"`
	// File is what relation-set --file named (or stdin for "-"), read by
	// the client, whose working directory and permissions are the hook's.
	File *string `json:"file,omitempty"`
}

// response is what the tool prints and its exit code.
type response struct {
	Code   int    `json:"code"`
	Stdout string `json:"stdout,omitempty"`
	Stderr string `json:"stderr,omitempty"`
}

// Exit codes of the hook tools, as Juju's: 2 for a command line the tool
// cannot accept, 1 for a call that failed.
const (
	exitFailed = 1
	exitUsage  = 2
)
