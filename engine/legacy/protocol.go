package legacy

import "github.com/fixpoint/fixpoint/engine/legacy/hooktool"

// Environment variables that connect a hook tool to the Run serving it;
// package hooktool, which the tools link, defines them.
const (
	// EnvSocket is the path of the run's unix socket.
	EnvSocket = hooktool.EnvSocket
	// EnvToken authenticates a tool to the run that started its hook.
	EnvToken = hooktool.EnvToken
	// EnvContext names the hook run a tool call belongs to.
	EnvContext = hooktool.EnvContext
	// EnvUnitDir is the unit's own directory, given to hooks.
	EnvUnitDir = hooktool.EnvUnitDir
)

// maxRequest bounds one tool request (a relation-set --file included).
const maxRequest = hooktool.MaxRequest

// The wire types, shared with the tools' client in package hooktool.
type (
	request  = hooktool.Request
	response = hooktool.Response
)

// Exit codes of the hook tools, as Juju's: 2 for a command line the tool
// cannot accept, 1 for a call that failed.
const (
	exitFailed = hooktool.ExitFailed
	exitUsage  = hooktool.ExitUsage
)
