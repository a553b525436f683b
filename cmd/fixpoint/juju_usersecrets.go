package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

// The juju front's user secrets: add-secret, update-secret,
// grant-secret, revoke-secret and remove-secret edit the secrets the
// environment's document declares (model/secrets_user.go) and deploy it,
// as fixpoint's edits by command do. Values travel in the deploy request
// only, beside the document, which the node that takes it seals into a
// revision: no value is logged or written to a file here. The document
// records each key's source as the environment variable
// secretVariable names, which `fixpoint apply` of an exported document
// reads.

// maxSecretFile bounds a --file or KEY#file=PATH read for a secret's
// content.
const maxSecretFile = model.MaxUserSecretBytes

// secretVariable is the environment variable the document names as the
// source of key of user secret name set by command:
// FIXPOINT_SECRET_<NAME>_<KEY>, upper case, other characters as '_'.
func secretVariable(name, key string) string {
	up := func(s string) string {
		return strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z':
				return r - 'a' + 'A'
			case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
				return r
			}
			return '_'
		}, s)
	}
	return "FIXPOINT_SECRET_" + up(name) + "_" + up(key)
}

// readFileCapped reads a file named on the command line for a secret's
// content, refusing one over maxSecretFile.
func readFileCapped(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxSecretFile {
		return nil, fmt.Errorf("%s is over %d bytes", path, maxSecretFile)
	}
	return data, nil
}

// secretContent is the content of a secret given as Juju takes it:
// KEY=VALUE, KEY#base64=VALUE and KEY#file=PATH arguments, and --file
// F, a YAML map of keys to values. Errors name keys and files, never a
// value.
func secretContent(args []string, file string) (map[string]string, error) {
	out := map[string]string{}
	if file != "" {
		data, err := readFileCapped(file)
		if err != nil {
			return nil, fmt.Errorf("read --file: %w", err)
		}
		var m map[string]string
		if err := yaml.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("--file %s: a YAML map of keys to string values is expected", file)
		}
		for k, v := range m {
			out[k] = v
		}
	}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			return nil, fmt.Errorf("%q is not KEY=VALUE", strings.SplitN(a, "=", 2)[0])
		}
		switch {
		case strings.HasSuffix(k, "#base64"):
			k = strings.TrimSuffix(k, "#base64")
			b, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				return nil, fmt.Errorf("key %s: the value is not base64", k)
			}
			v = string(b)
		case strings.HasSuffix(k, "#file"):
			k = strings.TrimSuffix(k, "#file")
			b, err := readFileCapped(v)
			if err != nil {
				return nil, fmt.Errorf("key %s: %w", k, err)
			}
			v = string(b)
		}
		out[k] = v
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no content: give KEY=VALUE pairs or --file")
	}
	if err := model.CheckSecretContent(out); err != nil {
		return nil, err
	}
	return out, nil
}

// userSecretName is the name of the user secret ref names in env: its
// name, its URI or its bare id.
func userSecretName(env *model.Environment, ref string) (string, error) {
	if _, ok := env.Secrets[ref]; ok {
		return ref, nil
	}
	id := strings.TrimPrefix(ref, "secret:")
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		id = id[i+1:]
	}
	for name := range env.Secrets {
		if model.UserSecretID(env.Name, name) == id {
			return name, nil
		}
	}
	return "", fmt.Errorf("secret %q not found (not found): the model's user secrets are %s", ref, listNames(env.Secrets))
}

// declare makes spec's sources the variables of content's keys.
func declare(spec *model.UserSecretSpec, name string, content map[string]string) {
	spec.Content = map[string]model.SecretSource{}
	for k := range content {
		spec.Content[k] = model.SecretSource{Env: secretVariable(name, k)}
	}
}

// editModel makes edit e, printing no plan, on the model --model names.
func (f *jujuFront) editModel(ctx context.Context, e *edit) error {
	c, err := f.checkedClient(ctx)
	if err != nil {
		return err
	}
	return f.editEnv(ctx, c.EnvName(), e)
}

// editEnv makes edit e, printing no plan, on environment env ("" the
// default one).
func (f *jujuFront) editEnv(ctx context.Context, env string, e *edit) error {
	e.quiet = true
	o := editOpts{r: f.r}
	// As --env names it on fixpoint's own edits.
	o.r.fs = pflag.NewFlagSet("juju", pflag.ContinueOnError)
	o.r.fs.StringVar(&o.r.env, "env", "", "")
	if err := o.r.fs.Set("env", env); err != nil {
		return err
	}
	o.r.envScoped = true
	return o.run(ctx, e)
}

func (f *jujuFront) addSecretCmd() *cobra.Command {
	var info, file string
	cmd := &cobra.Command{
		Use:   "add-secret NAME [KEY=VALUE...] [--file F] [--info DESCRIPTION]",
		Short: "Add a user secret to the model; prints its URI",
		Long: `add-secret declares user secret NAME in the environment, its content given
as KEY=VALUE (KEY#base64=VALUE, KEY#file=PATH) or --file (YAML), and
deploys it: its first revision is sealed by the control plane. It prints
the secret's URI. The document records each key as read from the variable
FIXPOINT_SECRET_<NAME>_<KEY>, which fixpoint apply of an exported file
reads.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			content, err := secretContent(args[1:], file)
			if err != nil {
				return exitf(exitFailed, "add-secret %s: %v", name, err)
			}
			var uri string
			err = f.editModel(cmd.Context(), &edit{what: "add-secret " + name, secretValues: map[string]map[string]string{name: content},
				change: func(_ context.Context, _ *api.EnvDoc, env *model.Environment) error {
					if _, ok := env.Secrets[name]; ok {
						return exitf(exitFailed, "secret with name %q already exists: update it with juju update-secret %s", name, name)
					}
					spec := model.UserSecretSpec{Description: info}
					declare(&spec, name, content)
					if env.Secrets == nil {
						env.Secrets = map[string]model.UserSecretSpec{}
					}
					env.Secrets[name] = spec
					uri = "secret:" + model.UserSecretID(env.Name, name)
					return nil
				}})
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), uri)
			return nil
		},
	}
	cmd.Flags().StringVar(&info, "info", "", "the secret's description")
	cmd.Flags().StringVar(&file, "file", "", "a YAML file of the content's keys and values")
	return cmd
}

func (f *jujuFront) updateSecretCmd() *cobra.Command {
	var info, file string
	var autoPrune bool
	cmd := &cobra.Command{
		Use:   "update-secret NAME|URI [KEY=VALUE...] [--file F] [--info DESCRIPTION]",
		Short: "Give a user secret new content (a new revision) or a new description",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := refuseFlags(cmd, "a user secret keeps its name; fixpoint prunes revisions no consumer tracks", "name"); err != nil {
				return err
			}
			var content map[string]string
			if len(args) > 1 || file != "" {
				var err error
				if content, err = secretContent(args[1:], file); err != nil {
					return exitf(exitFailed, "update-secret %s: %v", args[0], err)
				}
			} else if !cmd.Flags().Changed("info") {
				return exitf(exitFailed, "update-secret %s: nothing to update: give new content, --file or --info", args[0])
			}
			e := &edit{what: "update-secret " + args[0]}
			e.change = func(_ context.Context, _ *api.EnvDoc, env *model.Environment) error {
				name, err := userSecretName(env, args[0])
				if err != nil {
					return exitf(exitFailed, "%v", err)
				}
				spec := env.Secrets[name]
				if cmd.Flags().Changed("info") {
					spec.Description = info
				}
				if content != nil {
					declare(&spec, name, content)
					e.secretValues = map[string]map[string]string{name: content}
				}
				env.Secrets[name] = spec
				return nil
			}
			return f.editModel(cmd.Context(), e)
		},
	}
	cmd.Flags().StringVar(&info, "info", "", "the secret's new description")
	cmd.Flags().StringVar(&file, "file", "", "a YAML file of the new content's keys and values")
	cmd.Flags().BoolVar(&autoPrune, "auto-prune", false, "accepted: fixpoint prunes revisions no consumer tracks")
	cmd.Flags().String("name", "", "not supported by fixpoint")
	return cmd
}

// grantCmd is grant-secret (grant) or revoke-secret: the secret's grant
// list in the document gains or loses the applications.
func (f *jujuFront) grantCmd(grant bool) *cobra.Command {
	use, short := "grant-secret NAME|URI APP[,APP...]", "Let applications read a user secret"
	if !grant {
		use, short = "revoke-secret NAME|URI APP[,APP...]", "Stop applications reading a user secret"
	}
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			apps := strings.Split(args[1], ",")
			return f.editModel(cmd.Context(), &edit{what: cmd.Name() + " " + args[0],
				change: func(_ context.Context, _ *api.EnvDoc, env *model.Environment) error {
					name, err := userSecretName(env, args[0])
					if err != nil {
						return exitf(exitFailed, "%v", err)
					}
					spec := env.Secrets[name]
					for _, app := range apps {
						if _, ok := env.Services[app]; !ok {
							return exitf(exitFailed, "application %q not found (not found): the model's applications are %s", app, listNames(env.Services))
						}
						has := slices.Contains(spec.Grant, app)
						switch {
						case grant && !has:
							spec.Grant = append(slices.Clone(spec.Grant), app)
						case !grant && has:
							spec.Grant = slices.DeleteFunc(slices.Clone(spec.Grant), func(s string) bool { return s == app })
						}
					}
					env.Secrets[name] = spec
					return nil
				}})
		},
	}
}

func (f *jujuFront) removeSecretCmd() *cobra.Command {
	var revision int
	cmd := &cobra.Command{
		Use:   "remove-secret NAME|URI [--revision N]",
		Short: "Remove a user secret from the model",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("revision") {
				return exitf(exitFailed, "juju remove-secret --revision: not supported by fixpoint (it prunes the revisions no consumer tracks itself); leave --revision out to remove the secret")
			}
			return f.editModel(cmd.Context(), &edit{what: "remove-secret " + args[0],
				change: func(_ context.Context, _ *api.EnvDoc, env *model.Environment) error {
					name, err := userSecretName(env, args[0])
					if err != nil {
						return exitf(exitFailed, "%v", err)
					}
					delete(env.Secrets, name)
					return nil
				}})
		},
	}
	cmd.Flags().IntVar(&revision, "revision", 0, "not supported by fixpoint")
	return cmd
}
