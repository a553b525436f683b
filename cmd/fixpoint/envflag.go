package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/model"
)

// An environment-scoped command (status, apply, exec, debug-log, ...)
// reads and changes one environment of the control plane
// (docs/environments.md, part G): -e/--env NAME, else $FIXPOINT_ENV, else
// the context's environment (fixpoint login --env NAME), else the
// default environment. The client then sends its environment-scoped
// requests under /v1/envs/NAME/ (api.Client.SetEnv); the cluster's
// routes stay where they are.

// envEnvHelp ends the help of an environment-scoped command.
const envEnvHelp = `
  FIXPOINT_ENV      environment to use, as -e/--env (else the context's,
                    else the default environment)`

// envFlag adds -e/--env to an environment-scoped command; call it after
// flags.
func (r *remote) envFlag(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&r.env, "env", "e", "", "environment to use (default $FIXPOINT_ENV, else the context's, else the default environment)")
	r.envScoped = true
	long := cmd.Long
	if i := strings.Index(long, "\nFlags come first"); i >= 0 && strings.Contains(long, "FIXPOINT_CONTEXT") {
		cmd.Long = long[:i] + envEnvHelp + long[i:]
	}
}

// chosenEnv is the environment an environment-scoped command uses, and
// where it comes from: --env, $FIXPOINT_ENV, the context sc (nil: none),
// else "" (the default environment). A malformed name is refused before
// anything is sent.
func (r *remote) chosenEnv(sc *savedContext) (string, string, error) {
	name, from := "", ""
	switch {
	case r.fs != nil && r.fs.Changed("env"):
		name, from = r.env, "--env"
	case os.Getenv("FIXPOINT_ENV") != "":
		name, from = os.Getenv("FIXPOINT_ENV"), "$FIXPOINT_ENV"
	case sc != nil && sc.Env != "":
		name, from = sc.Env, "the context's environment (fixpoint login --env)"
	}
	if name == "" {
		return "", "", nil
	}
	if err := model.CheckName(model.KindEnv, name); err != nil {
		return "", "", fmt.Errorf("%s: %w", from, err)
	}
	return name, from, nil
}

// envExplicit is the environment -e/--env names, "" when not given.
func (r *remote) envExplicit() string {
	if r.fs != nil && r.fs.Changed("env") {
		return r.env
	}
	return ""
}
