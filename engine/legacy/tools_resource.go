package legacy

import (
	"fmt"
)

func init() {
	tools["resource-get"] = tool{run: inputsTool((*inputs).resourceGet), keep: keepHook}
}

// rawText is a tool's output printed as it is, without the newline the
// formats add.
type rawText string

// resourceGet is `resource-get NAME`: the local path of the resource's
// file, which the agent fetched before the hooks ran, printed without a
// newline as Juju prints it. A resource the environment does not provide
// fails as Juju's does for a local charm deployed without it: Juju's
// controller has no file to serve, and the tool annotates its not-found.
func (in *inputs) resourceGet(c *call) (any, error) {
	args := c.f.args
	if len(args) < 1 {
		return nil, usagef("missing required resource name")
	}
	if err := checkEmpty(args[1:]); err != nil {
		return nil, err
	}
	name := args[0]
	path, ok := in.resources[name]
	if !ok {
		return nil, fmt.Errorf("could not download resource: resource %q not found", name)
	}
	return rawText(path), nil
}
