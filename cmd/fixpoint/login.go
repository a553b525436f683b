package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

func newLoginCmd() *cobra.Command {
	var tokenFile, ca, name, env string
	cmd := &cobra.Command{
		Use:   "login [ADDR... --token-file F [--ca FILE] [--name N]]",
		Short: "Save a control plane's addresses, token and CA as a named context, and make it current",
		Long: `login checks that the control plane at ADDR (host:port or URL, several
separated by spaces or commas) accepts the operator token in --token-file
(or $FIXPOINT_TOKEN), then saves them, with the CA certificate of an HTTPS
control plane (--ca), as the context --name (default "default"), and makes
it the current context, as juju switch does. Commands then need no
--controller, --token-file or --tls-ca: they use the context named by
--context or $FIXPOINT_CONTEXT, else the current one. Flags and environment
variables still come first (--controller, FIXPOINT_ADDR, --tls-ca,
FIXPOINT_CA, ...), and an explicit --data-dir is used rather than the
current context.

Contexts are kept in fixpoint/contexts.json under the user's config dir
($XDG_CONFIG_HOME, or ~/.config), readable by its owner only (0600 in a 0700
directory): it holds the token itself, as kubeconfig does, and the CA's
absolute path. Logging in again under a name replaces that context.

--env NAME makes the context's environment-scoped commands (status, apply,
exec, ...) use environment NAME unless -e/--env or $FIXPOINT_ENV names
another; login --env NAME without addresses sets it on the current context
(or the one --name gives), and --env "" clears it. An environment's token
(fixpoint token create --env NAME) logs in with --env NAME.

Without arguments, login lists the saved contexts (never their tokens),
the current one marked with *.`,
		Example: `  fixpoint login https://10.0.0.1:8080 https://10.0.0.2:8080 --token-file operator.token --ca tls/ca.pem --name prod
  fixpoint status                      # through prod
  fixpoint status --context staging
  fixpoint login --env staging         # the current context's commands use staging
  fixpoint login                       # list`,
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := contextsPath()
			if err != nil {
				return exitf(exitFailed, "%v", err)
			}
			cs, err := loadContexts(path)
			if err != nil {
				return exitf(exitFailed, "%v", err)
			}
			if len(args) == 0 && cmd.Flags().Changed("env") && tokenFile == "" && ca == "" {
				return setContextEnv(cmd, cs, path, name, cmd.Flags().Changed("name"), env)
			}
			if len(args) == 0 {
				if tokenFile != "" || ca != "" || cmd.Flags().Changed("name") {
					return exitf(exitFailed, "login needs the control plane's address: fixpoint login ADDR... --token-file F [--ca FILE] [--name N]")
				}
				printContexts(cmd.OutOrStdout(), cs, path)
				return nil
			}
			if err := checkContextName(name); err != nil {
				return exitf(exitFailed, "--name: %v", err)
			}
			token, err := tokenFrom("", tokenFile)
			if err != nil {
				return exitf(exitFailed, "%v", err)
			}
			if token == "" {
				return exitf(exitFailed, "login needs the operator token: pass --token-file (the operator.token in the data dir of the up or bootstrap server) or set FIXPOINT_TOKEN")
			}
			if env != "" {
				if err := model.CheckName(model.KindEnv, env); err != nil {
					return exitf(exitFailed, "--env: %v", err)
				}
			}
			sc := &savedContext{Token: token, Env: env}
			if ca != "" {
				if sc.CA, err = filepath.Abs(ca); err != nil {
					return exitf(exitFailed, "--ca: %v", err)
				}
			}
			for _, a := range args {
				for _, one := range strings.Split(a, ",") {
					if one = strings.TrimSpace(one); one != "" {
						sc.Addrs = append(sc.Addrs, one)
					}
				}
			}
			if sc.CA != "" {
				sc.Addrs = httpsByDefault(sc.Addrs)
			}
			if err := checkLogin(cmd.Context(), sc); err != nil {
				return exitf(exitFailed, "login %s: %v; nothing was saved", strings.Join(sc.Addrs, ","), err)
			}
			cs.Contexts[name] = sc
			cs.Current = name
			if err := cs.save(path); err != nil {
				return exitf(exitFailed, "%v", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "logged in to %s as context %s, now the current context (saved in %s)\n", strings.Join(sc.Addrs, ","), name, path)
			return nil
		},
	}
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "file holding the operator token (default $FIXPOINT_TOKEN)")
	cmd.Flags().StringVar(&ca, "ca", "", "CA certificate (PEM) the control plane's HTTPS certificate chains to; bare addresses are then https")
	cmd.Flags().StringVar(&name, "name", "default", "name of the context")
	cmd.Flags().StringVar(&env, "env", "", "environment the context's commands use when -e/--env and $FIXPOINT_ENV name none (default: the default environment)")
	return cmd
}

// checkLogin asks the control plane for its status summary with sc's
// token and CA: a login that could not talk to it is not saved.
func checkLogin(ctx context.Context, sc *savedContext) error {
	tf := tlsFlags{ca: sc.CA}
	hc, err := tf.httpClient()
	if err != nil {
		return fmt.Errorf("--ca: %w", err)
	}
	c := api.NewClient(sc.Addrs, sc.Token, withTLSHints(hc, sc.CA, "--ca"))
	// The context's environment's status: an environment's token reads
	// no other, and an environment that does not exist is not saved.
	c.SetEnv(sc.Env)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.Do(ctx, http.MethodGet, "/v1/status?summary=1", nil, nil); err != nil {
		if ae := (*api.Error)(nil); errors.As(err, &ae) && ae.Status == http.StatusUnauthorized {
			return fmt.Errorf("the control plane did not accept the token (%s answered 401): pass the operator token, the operator.token in the data dir of the up or bootstrap server", ae.Node)
		}
		return err
	}
	return nil
}

// printContexts lists cs for people: name, addresses, CA; never tokens.
func printContexts(w io.Writer, cs *contexts, path string) {
	if len(cs.Contexts) == 0 {
		fmt.Fprintf(w, "no saved contexts in %s; save one with fixpoint login ADDR... --token-file F [--ca FILE] [--name N]\n", path)
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CURRENT\tNAME\tENV\tADDRESSES\tCA")
	for _, n := range cs.names() {
		sc := cs.Contexts[n]
		cur := ""
		if n == cs.Current {
			cur = "*"
		}
		env := sc.Env
		if env == "" {
			env = "(default)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", cur, n, env, strings.Join(sc.Addrs, ","), orDash(sc.CA))
	}
	tw.Flush()
}

// setContextEnv sets the environment of a saved context: the one --name
// gives (named), else the current one. An empty env clears it.
func setContextEnv(cmd *cobra.Command, cs *contexts, path, name string, named bool, env string) error {
	if env != "" {
		if err := model.CheckName(model.KindEnv, env); err != nil {
			return exitf(exitFailed, "--env: %v", err)
		}
	}
	if !named {
		name = cs.Current
	}
	sc := cs.Contexts[name]
	if sc == nil {
		return exitf(exitFailed, "login --env: no context %q is saved (saved: %s); log in first: fixpoint login ADDR --token-file F --env %s", name, strings.Join(cs.names(), ", "), env)
	}
	next := *sc
	next.Env = env
	if err := checkLogin(cmd.Context(), &next); err != nil {
		return exitf(exitFailed, "login --env %s: %v; the context is unchanged", env, err)
	}
	cs.Contexts[name] = &next
	if err := cs.save(path); err != nil {
		return exitf(exitFailed, "%v", err)
	}
	if env == "" {
		fmt.Fprintf(cmd.OutOrStdout(), "context %s now uses the default environment\n", name)
	} else {
		fmt.Fprintf(cmd.OutOrStdout(), "context %s now uses environment %s\n", name, env)
	}
	return nil
}
