package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/cmd/fixpoint/internal/juju"
	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

// The juju front: `fixpoint juju ARGS...`, and the binary run under the
// name juju (a symlink), accept the Juju 3.6 command line that jubilant
// (and scripts) issue, print Juju's JSON and YAML shapes
// (internal/juju) and follow Juju's conventions: errors are "ERROR ..."
// lines on stderr with exit status 1, usage errors exit 2. Each command
// reads and acts through the api.Client and the functions the fixpoint
// commands use; none has a rule of its own.

// jujuFrontName is the name the binary answers to as the juju front.
const jujuFrontName = "juju"

// exitUsage is Juju's exit status for a command line it cannot parse.
const exitUsage = 2

// jujuFront holds what every juju command shares: how to reach the
// control plane (fixpoint's login context and FIXPOINT_* variables, as
// every fixpoint command finds it) and the --model the caller named.
type jujuFront struct {
	r     remote
	model string
}

// jujuMain runs the juju front on args with the given streams and
// returns its exit status; it prints errors as Juju does.
func jujuMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newJujuRoot()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	code, msg := exitFailed, err.Error()
	var ee *exitError
	if errors.As(err, &ee) {
		code, msg = ee.code, ee.msg
	}
	var ae *api.Error
	if errors.As(err, &ae) && ae.Status == http.StatusUnauthorized {
		msg = "the control plane did not accept the operator token (" + ae.Node + " answered 401): set FIXPOINT_TOKEN, or save a context with fixpoint login"
	}
	if msg != "" {
		fmt.Fprintln(stderr, "ERROR "+msg)
	}
	return code
}

// newJujuCmd is `fixpoint juju ARGS...`: the juju front under fixpoint's
// name, for a machine without the juju symlink.
func newJujuCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "juju [COMMAND] [ARGS...]",
		Short: "Juju's command line (status, run, exec, secrets, ...) on fixpoint, for jubilant and scripts",
		Long: `juju runs a Juju 3.6 command against this control plane, with Juju's flags,
JSON and YAML output and exit status, as jubilant calls
the juju command. The same binary run under the name juju (ln -s fixpoint
juju) is this front. A Juju model is the control plane's environment.

It finds the control plane as every fixpoint command does: FIXPOINT_ADDR,
FIXPOINT_TOKEN and FIXPOINT_CA, else the current context (fixpoint login;
FIXPOINT_CONTEXT picks another), else the fixpoint up running on .fixpoint
in the working directory. docs/juju.md says what each command supports.` + remoteEnvHelp,
		Example: `  fixpoint juju status --format json
  fixpoint juju run db/0 backup --format json
  ln -s "$(command -v fixpoint)" ~/bin/juju && juju status`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if code := jujuMain(cmd.Context(), args, cmd.OutOrStdout(), cmd.ErrOrStderr()); code != 0 {
				return &exitError{code: code}
			}
			return nil
		},
	}
}

// newJujuRoot is the juju front's command tree.
func newJujuRoot() *cobra.Command {
	f := &jujuFront{}
	f.r.dataDir = defaultDataDir
	root := &cobra.Command{
		Use:   jujuFrontName,
		Short: "Juju's command line on a fixpoint control plane",
		Long: `This juju is fixpoint's front for the Juju 3.6 command line: the commands
jubilant calls, on the control plane of the current
fixpoint context. A Juju model is the control plane's environment.` + remoteEnvHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       juju.Binary(),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return &exitError{code: exitUsage, msg: err.Error() + " (see juju " + cmd.Name() + " --help)"}
	})
	root.PersistentFlags().StringVarP(&f.model, "model", "m", "", "model to operate in: an environment of the control plane ([CONTROLLER:][USER/]NAME)")
	root.AddCommand(f.statusCmd(), f.showUnitCmd(), f.configCmd(), f.secretsCmd(), f.showSecretCmd(),
		f.modelsCmd(), f.showModelCmd(), f.addModelCmd(), f.destroyModelCmd(),
		f.addSecretCmd(), f.updateSecretCmd(), f.grantCmd(true), f.grantCmd(false), f.removeSecretCmd(),
		f.exposeCmd(true), f.exposeCmd(false), f.trustCmd(), f.modelConfigCmd(), f.versionCmd(), f.whoamiCmd(), f.debugLogCmd(),
		f.runCmd(), f.execCmd(), f.showOperationCmd(), f.showTaskCmd(), f.operationsCmd(),
		f.deployCmd(), f.addUnitCmd(), f.integrateCmd(), f.removeRelationCmd(),
		f.removeCmd("remove-unit UNIT... [--no-prompt]", "Remove units, as fixpoint remove-unit does", newRemoveUnitCmd),
		f.removeCmd("remove-application APP... [--no-prompt]", "Remove applications, as fixpoint remove-service does", newRemoveServiceCmd))
	for _, p := range pendingJujuCommands {
		root.AddCommand(f.pendingCmd(p))
	}
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return &exitError{code: exitUsage, msg: fmt.Sprintf("juju: %q is not a juju command fixpoint knows. See \"juju --help\".", args[0])}
		}
		return cmd.Help()
	}
	root.Args = cobra.ArbitraryArgs
	return root
}

// client is the api client of the control plane the front talks to.
func (f *jujuFront) client() (*api.Client, error) {
	return f.r.client()
}

// controller is the controller's name as Juju output shows it: the
// fixpoint context in use, or "fixpoint" when none is.
func (f *jujuFront) controller() string {
	_, from, err := f.r.chosenContext(os.Getenv("FIXPOINT_ADDR") != "")
	if name, ok := strings.CutPrefix(from, "context "); ok && err == nil {
		return name
	}
	return "fixpoint"
}

// modelName is the model name m names: Juju's [CONTROLLER:][USER/]NAME
// without its controller and user.
func modelName(m string) string {
	if i := strings.IndexByte(m, ':'); i >= 0 {
		m = m[i+1:]
	}
	if i := strings.IndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	return m
}

// currentModel is the current model's name: $FIXPOINT_ENV, else the
// saved context's environment, as fixpoint's commands pick theirs; ""
// for the default environment.
func (f *jujuFront) currentModel() (string, error) {
	sc, _, err := f.r.chosenContext(os.Getenv("FIXPOINT_ADDR") != "")
	if err != nil {
		return "", exitf(exitFailed, "%v", err)
	}
	name, _, err := f.r.chosenEnv(sc)
	if err != nil {
		return "", exitf(exitFailed, "the current model: %v", err)
	}
	return name, nil
}

// findModel is the environment named names (Juju's model name; "" the
// current model), among the control plane's environments.
func (f *jujuFront) findModel(ctx context.Context, c *api.Client, named string) (api.EnvInfo, error) {
	want := modelName(named)
	if want == "" {
		cur, err := f.currentModel()
		if err != nil {
			return api.EnvInfo{}, err
		}
		want = cur
	}
	envs, err := c.Envs(ctx)
	if errors.Is(err, api.ErrForbidden) {
		// An environment's token lists no environments: its model is
		// the one it names, which its requests then reach or not.
		return api.EnvInfo{Name: want, Default: want == ""}, nil
	}
	if errors.Is(err, api.ErrNotFound) {
		// A server from before environments holds one, the default.
		sum, err := c.WaitSummary(ctx, false, nil, 0)
		if err != nil {
			return api.EnvInfo{}, exitf(exitFailed, "read the model: %v", err)
		}
		envs = []api.EnvInfo{{Name: sum.Environment, Default: true}}
	} else if err != nil {
		return api.EnvInfo{}, exitf(exitFailed, "read the models: %v", err)
	}
	var names []string
	for _, e := range envs {
		if e.Default && want == "" || e.Name == want && want != "" {
			return e, nil
		}
		if e.Name != "" {
			names = append(names, e.Name)
		}
	}
	have := "it holds none yet: add one with juju add-model NAME"
	if len(names) > 0 {
		have = "its models are " + strings.Join(names, ", ")
	}
	return api.EnvInfo{}, exitf(exitFailed, "model %q not found (not found): %s", named, have)
}

// modelClient is the client whose environment-scoped requests go to the
// environment named names ("" the caller's --model, else the current
// model), and that environment.
func (f *jujuFront) modelClient(ctx context.Context, named string) (*api.Client, api.EnvInfo, error) {
	c, err := f.client()
	if err != nil {
		return nil, api.EnvInfo{}, err
	}
	if named == "" {
		named = f.model
	}
	env, err := f.findModel(ctx, c, named)
	if err != nil {
		return nil, env, err
	}
	return c, env, useModel(c, env)
}

// clientAndModel is the client of the model named names ("" the caller's
// --model) and the environment's state, values unredacted when reveal.
func (f *jujuFront) clientAndModel(ctx context.Context, named string, reveal bool) (*api.Client, *model.State, error) {
	c, env, err := f.modelClient(ctx, named)
	if err != nil {
		return nil, nil, err
	}
	c.SetReveal(reveal)
	st, err := c.State(ctx, false)
	if err != nil {
		return nil, nil, exitf(exitFailed, "read the model %s: %v", env.Name, err)
	}
	if st.Name == "" {
		st.Name = env.Name
	}
	return c, st, nil
}

// checkedClient is the client of the caller's --model (else the current
// model).
func (f *jujuFront) checkedClient(ctx context.Context) (*api.Client, error) {
	c, _, err := f.modelClient(ctx, "")
	return c, err
}

// jujuFormat adds Juju's --format flag with its default; Juju's -o is
// --output (a file), which the front does not take.
func jujuFormat(cmd *cobra.Command, format *string, def string, allowed ...string) {
	cmd.Flags().StringVar(format, "format", def, "output format: "+strings.Join(allowed, ", "))
}

// checkJujuFormat refuses a --format the command does not print.
func checkJujuFormat(name, format string, allowed ...string) error {
	for _, a := range allowed {
		if format == a {
			return nil
		}
	}
	return &exitError{code: exitUsage, msg: fmt.Sprintf("invalid value %q for option --format: %s prints %s", format, name, strings.Join(allowed, ", "))}
}

// useModel makes c's environment-scoped requests go to env's routes
// (the unprefixed ones for the default environment).
func useModel(c *api.Client, env api.EnvInfo) error {
	if env.Default {
		c.SetEnv("")
	} else {
		c.SetEnv(env.Name)
	}
	return nil
}
