package main

import (
	"os"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/pflag"

	"github.com/fixpoint/fixpoint/engine/memgov"
)

// memoryFlag is --memory-limit of `server` and `up` (memgov states the
// precedence: GOMEMLIMIT, then the flag, then the cgroup).
func memoryFlag(f *pflag.FlagSet, v *string) {
	f.StringVar(v, "memory-limit", "", "the node's soft memory limit, e.g. 4GiB or 512MiB (none: no limit); under pressure near it the node takes agents' work, results and logs slowly rather than dying. Default: the cgroup's memory limit, if any. GOMEMLIMIT, when set, wins")
}

// memoryGovernor resolves the node's limit and sets the runtime's; the
// node runs the governor (memgov.Governor.Run) while it serves.
func memoryGovernor(flag string, log hclog.Logger) (*memgov.Governor, error) {
	l, err := memgov.Resolve(flag, os.LookupEnv, memgov.HostCgroup)
	if err != nil {
		return nil, err
	}
	if flag != "" && l.Source == memgov.SourceEnv {
		log.Warn("GOMEMLIMIT is set and wins over --memory-limit", "limit", l.String())
	}
	l.Apply()
	log.Info(l.String())
	return memgov.New(l, nil), nil
}
