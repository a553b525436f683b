package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/cmd/fixpoint/internal/juju"
	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

// The juju front's models: a Juju model is an environment of the control
// plane (POST/GET/DELETE /v1/envs). add-model makes one, destroy-model
// removes it with its applications, models and show-model describe them.

// modelSource is show-model's account of environment env, whose state
// is st.
func (f *jujuFront) modelSource(env api.EnvInfo, st *model.State) juju.ModelSource {
	src := juju.ModelSource{Name: env.Name, Controller: f.controller(), Secrets: len(st.Secrets)}
	if !env.Default {
		// The default environment's hooks see the uuid derived from its
		// name; another's see the uuid its env-add gave it.
		src.UUID = env.UUID
	}
	for _, m := range st.Machines {
		if m.ID != "" {
			src.Machines = append(src.Machines, m.ID)
		}
	}
	sort.Strings(src.Machines)
	return src
}

// modelInfo is show-model's value for env.
func (f *jujuFront) modelInfo(ctx context.Context, env api.EnvInfo) (juju.ModelInfo, error) {
	_, st, err := f.clientAndModel(ctx, env.Name, false)
	if err != nil {
		return juju.ModelInfo{}, err
	}
	return juju.Model(f.modelSource(env, st)), nil
}

func (f *jujuFront) showModelCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "show-model [MODEL] [--format json|yaml]",
		Short: "Show a model (an environment of the control plane), as juju show-model does",
		Long: `show-model prints the model as juju show-model does: its name, uuid (the
JUJU_MODEL_UUID its hooks see), controller, cloud, life and agent version.
MODEL defaults to --model, else the current model.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkJujuFormat("show-model", format, "yaml", "json"); err != nil {
				return err
			}
			named := ""
			if len(args) == 1 {
				named = args[0]
			}
			_, env, err := f.modelClient(cmd.Context(), named)
			if err != nil {
				return err
			}
			m, err := f.modelInfo(cmd.Context(), env)
			if err != nil {
				return err
			}
			return writeJuju(cmd.OutOrStdout(), map[string]juju.ModelInfo{env.Name: m}, format)
		},
	}
	jujuFormat(cmd, &format, "yaml", "yaml", "json")
	return cmd
}

func (f *jujuFront) modelsCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:     "models [--format tabular|json|yaml]",
		Aliases: []string{"list-models"},
		Short:   "List the models: the control plane's environments",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkJujuFormat("models", format, "tabular", "json", "yaml"); err != nil {
				return err
			}
			ctx := cmd.Context()
			c, current, err := f.modelClient(ctx, "")
			var ee *exitError
			if errors.As(err, &ee) && ee.code == exitFailed && c == nil {
				// No current model (a named one is gone): list the others.
				current = api.EnvInfo{}
			} else if err != nil {
				return err
			}
			c, err = f.client()
			if err != nil {
				return err
			}
			envs, err := c.Envs(ctx)
			if errors.Is(err, api.ErrNotFound) {
				envs = []api.EnvInfo{current}
			} else if err != nil {
				return exitf(exitFailed, "read the models: %v", err)
			}
			out := juju.Models{Models: []juju.ModelInfo{}}
			for _, env := range envs {
				if env.Name == "" {
					// A default environment nothing was deployed to yet.
					continue
				}
				m, err := f.modelInfo(ctx, env)
				if err != nil {
					return err
				}
				m.Access, m.LastConnection = "admin", "just now"
				out.Models = append(out.Models, m)
			}
			out.Current = current.Name
			if format != "tabular" {
				return writeJuju(cmd.OutOrStdout(), out, format)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "Model\tCloud/Region\tType\tStatus\tMachines\tAccess")
			for _, m := range out.Models {
				name := m.ShortName
				if name == out.Current {
					name += "*"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", name, m.Cloud, m.Type, m.Status.Current, len(m.Machines), m.Access)
			}
			return tw.Flush()
		},
	}
	jujuFormat(cmd, &format, "tabular", "tabular", "json", "yaml")
	return cmd
}

func (f *jujuFront) addModelCmd() *cobra.Command {
	var noSwitch bool
	var controller string
	cmd := &cobra.Command{
		Use:   "add-model NAME [CLOUD] [--no-switch]",
		Short: "Add a model: a new environment of the control plane",
		Long: `add-model makes environment NAME on the control plane, as fixpoint env add
does; its applications, units and secrets are its own. CLOUD, when given,
must be fixpoint's (units run on the machines whose agents joined). Without
--no-switch the saved context's current model becomes NAME.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := refuseFlags(cmd, "a model's settings, credential and region come from its environment", "config", "credential", "region"); err != nil {
				return err
			}
			if len(args) == 2 && args[1] != juju.Cloud {
				return exitf(exitFailed, "cloud %q not found: a fixpoint controller has one cloud, %s; leave CLOUD out", args[1], juju.Cloud)
			}
			if controller != "" && modelName(controller) != f.controller() {
				return exitf(exitFailed, "controller %q not found: this front talks to %s (the current fixpoint context); pick another with FIXPOINT_CONTEXT", controller, f.controller())
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			name := args[0]
			if _, err := c.AddEnv(cmd.Context(), api.NewEnv{Name: name}); err != nil {
				if errors.Is(err, api.ErrConflict) {
					return exitf(exitFailed, "model %q already exists: pick another name, or destroy it with juju destroy-model %s --no-prompt", name, name)
				}
				return exitf(exitFailed, "add model %s: %v", name, err)
			}
			// Juju gives a model its cloud's credential, which trusted
			// applications read (deploy --trust, credential-get): the
			// manual cloud's, without attributes.
			if err := f.editEnv(cmd.Context(), name, &edit{what: "add-model " + name,
				change: func(_ context.Context, _ *api.EnvDoc, env *model.Environment) error {
					if env.Credential == nil {
						env.Credential = &model.CredentialSpec{Type: juju.CloudType, Name: juju.Cloud, AuthType: "empty"}
					}
					return nil
				}}); err != nil {
				return exitf(exitFailed, "model %s was added, but its cloud credential was not declared: %v; destroy it (juju destroy-model %s --no-prompt) and add it again", name, err, name)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "Added '%s' model on %s with credential '%s' for user '%s'\n", name, juju.Cloud, juju.Cloud, juju.Owner)
			if noSwitch {
				return nil
			}
			return f.switchModel(cmd, name)
		},
	}
	cmd.Flags().BoolVar(&noSwitch, "no-switch", false, "keep the current model")
	cmd.Flags().StringVarP(&controller, "controller", "c", "", "the controller: the current fixpoint context's")
	cmd.Flags().StringArray("config", nil, "not supported by fixpoint")
	cmd.Flags().String("credential", "", "not supported by fixpoint")
	cmd.Flags().String("region", "", "not supported by fixpoint")
	return cmd
}

func (f *jujuFront) destroyModelCmd() *cobra.Command {
	var noPrompt, force bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "destroy-model NAME --no-prompt [--destroy-storage] [--force] [--timeout D]",
		Short: "Destroy a model: its applications' units run their dying hooks, then the environment goes",
		Long: `destroy-model removes environment NAME, as fixpoint env remove does: its
units run their dying hooks, their storage goes with them, and the
environment is dropped once none is left. --timeout bounds the wait.
--force drops the units left on lost machines without their hooks. The
default environment, which every control plane has, is not destroyed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := refuseFlags(cmd, "fixpoint removes a unit's storage with it", "release-storage"); err != nil {
				return err
			}
			if !noPrompt {
				return &exitError{code: exitUsage, msg: fmt.Sprintf("destroy-model %s removes every application of the model: pass --no-prompt to confirm", args[0])}
			}
			ctx := cmd.Context()
			c, env, err := f.modelClient(ctx, args[0])
			if err != nil {
				return err
			}
			if env.Default {
				return exitf(exitFailed, "model %q is the control plane's default environment, which is not destroyed: remove its applications (juju remove-application APP --no-prompt) instead", env.Name)
			}
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			if err := c.RemoveEnvWith(ctx, env.Name, api.RemoveEnvOptions{Force: force}); err != nil {
				if ctx.Err() != nil {
					return exitf(exitFailed, "timed out destroying model %s after %s: it keeps going; see juju models", env.Name, timeout)
				}
				return exitf(exitFailed, "destroy model %s: %v", env.Name, err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "Model %s destroyed\n", env.Name)
			// A context whose model is gone goes back to the default
			// environment.
			return f.setContextModel(cmd, env.Name, "")
		},
	}
	cmd.Flags().BoolVar(&noPrompt, "no-prompt", false, "destroy without asking")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "how long to wait for the model to go (0: no limit)")
	cmd.Flags().Bool("destroy-storage", false, "destroy the units' storage (fixpoint always does)")
	cmd.Flags().BoolVar(&force, "force", false, "drop the units on lost machines without their hooks")
	cmd.Flags().Bool("no-wait", false, "accepted for Juju's command line")
	cmd.Flags().Bool("release-storage", false, "not supported by fixpoint")
	return cmd
}

// switchModel makes name ("" the default environment) the current model:
// the environment of the saved context in use (fixpoint login --env).
// Without a saved context (FIXPOINT_ADDR) there is none to change, and
// it says how to name the model instead.
func (f *jujuFront) switchModel(cmd *cobra.Command, name string) error {
	return f.setContextModel(cmd, "*", name)
}

// setContextModel makes name the saved context's model when its model is
// was ("*": whatever it is).
func (f *jujuFront) setContextModel(cmd *cobra.Command, was, name string) error {
	_, from, err := f.r.chosenContext(os.Getenv("FIXPOINT_ADDR") != "")
	ctxName, ok := strings.CutPrefix(from, "context ")
	if err != nil || !ok {
		if name != "" && was == "*" {
			fmt.Fprintf(cmd.ErrOrStderr(), "No saved context holds the current model: name it with --model %s or FIXPOINT_ENV=%s\n", name, name)
		}
		return nil
	}
	path, err := contextsPath()
	if err != nil {
		return exitf(exitFailed, "switch to model %s: %v", name, err)
	}
	cs, err := loadContexts(path)
	if err != nil {
		return exitf(exitFailed, "switch to model %s: %v", name, err)
	}
	sc := cs.Contexts[ctxName]
	if sc == nil || sc.Env == name || was != "*" && sc.Env != was {
		return nil
	}
	sc.Env = name
	if err := cs.save(path); err != nil {
		return exitf(exitFailed, "switch to model %s: %v", name, err)
	}
	return nil
}

// modelConfig is the model's config as juju model-config shows it, for
// environment env whose state is st.
func (f *jujuFront) modelConfig(env api.EnvInfo, st *model.State) map[string]juju.ModelConfigValue {
	uuid := env.UUID
	if env.Default || uuid == "" {
		uuid = juju.ModelUUID(env.Name)
	}
	interval := ""
	if st.UpdateStatus > 0 {
		// As written, when the document keeps it.
		interval = time.Duration(st.UpdateStatus).String()
		if doc := st.Document; doc != nil && doc.ModelConfig[model.ModelConfigUpdateStatus] != "" {
			interval = doc.ModelConfig[model.ModelConfigUpdateStatus]
		}
	}
	return juju.ModelConfig(env.Name, uuid, interval, engine.DefaultUpdateStatus.String())
}

func (f *jujuFront) modelConfigCmd() *cobra.Command {
	var format string
	var reset []string
	cmd := &cobra.Command{
		Use:   "model-config [KEY | KEY=VALUE...] [--reset KEY,...] [--format tabular|json|yaml]",
		Short: "Show the model's config, or set the keys fixpoint honours (update-status-hook-interval)",
		Long: `model-config prints the model's config as juju model-config does: its name,
type and uuid, and update-status-hook-interval (the server's
--update-status-interval default unless the model sets it). KEY=VALUE sets
a key, --reset puts it back to the default: an edit of the environment's
model_config, applied. fixpoint takes update-status-hook-interval only.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := refuseFlags(cmd, "model settings are set as KEY=VALUE", "file"); err != nil {
				return err
			}
			var set []string
			for _, a := range args {
				if strings.Contains(a, "=") {
					set = append(set, a)
				}
			}
			if len(set) > 0 || len(reset) > 0 {
				if len(set) != len(args) {
					return &exitError{code: exitUsage, msg: "model-config: give either KEY to read or KEY=VALUE pairs to set, not both"}
				}
				return f.setModelConfig(cmd, set, reset)
			}
			if err := checkJujuFormat("model-config", format, "tabular", "json", "yaml"); err != nil {
				return err
			}
			ctx := cmd.Context()
			_, env, err := f.modelClient(ctx, "")
			if err != nil {
				return err
			}
			_, st, err := f.clientAndModel(ctx, "", false)
			if err != nil {
				return err
			}
			cfg := f.modelConfig(env, st)
			if len(args) == 1 {
				v, ok := cfg[args[0]]
				if !ok {
					return exitf(exitFailed, "key %q not found in %q model.", args[0], env.Name)
				}
				fmt.Fprintln(cmd.OutOrStdout(), v.Value)
				return nil
			}
			if len(args) > 1 {
				return &exitError{code: exitUsage, msg: "model-config: read one KEY, or all with none"}
			}
			if format != "tabular" {
				return writeJuju(cmd.OutOrStdout(), cfg, format)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "Attribute\tFrom\tValue")
			for _, k := range sortedKeys(cfg) {
				fmt.Fprintf(tw, "%s\t%s\t%v\n", k, cfg[k].Source, cfg[k].Value)
			}
			return tw.Flush()
		},
	}
	jujuFormat(cmd, &format, "tabular", "tabular", "json", "yaml")
	cmd.Flags().StringSliceVar(&reset, "reset", nil, "put these keys back to their defaults (comma-separated)")
	cmd.Flags().String("file", "", "not supported by fixpoint")
	return cmd
}

// setModelConfig sets KEY=VALUE pairs and resets keys of the model's
// config: an edit of the environment's model_config.
func (f *jujuFront) setModelConfig(cmd *cobra.Command, set, reset []string) error {
	check := func(k string) error {
		switch {
		case k == "name" || k == "type" || k == "uuid":
			return exitf(exitFailed, "attribute %q cannot be set", k)
		case !slices.Contains(model.ModelConfigKeys, k):
			return exitf(exitFailed, "model-config %s: fixpoint does not take this key (it takes %s); leave it out", k, strings.Join(model.ModelConfigKeys, ", "))
		}
		return nil
	}
	values := map[string]string{}
	for _, kv := range set {
		k, v, _ := strings.Cut(kv, "=")
		if err := check(k); err != nil {
			return err
		}
		values[k] = v
	}
	for _, k := range reset {
		if err := check(k); err != nil {
			return err
		}
	}
	return f.editModel(cmd.Context(), &edit{what: "model-config",
		change: func(_ context.Context, _ *api.EnvDoc, env *model.Environment) error {
			if env.ModelConfig == nil {
				env.ModelConfig = map[string]string{}
			}
			for _, k := range reset {
				delete(env.ModelConfig, k)
			}
			for k, v := range values {
				env.ModelConfig[k] = v
			}
			return nil
		}})
}
