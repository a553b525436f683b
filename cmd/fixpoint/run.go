package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

// defaultOperationWait is how long run and exec wait for their operation
// unless told.
const defaultOperationWait = 5 * time.Minute

func newRunCmd() *cobra.Command {
	var r remote
	var paramsFile, format string
	var wait time.Duration
	var background, stringArgs, utc bool
	cmd := &cobra.Command{
		Use:   "run UNIT|SERVICE/leader ACTION [KEY=VALUE ...]",
		Short: "Run a charm's action on a unit, as juju run does",
		Long: `run queues ACTION of the unit's charm (declared in its actions.yaml, or
charmcraft.yaml's actions, or charm.cue's), waits for it and prints it as
juju run does: what it logged (action-log) on stderr, then on stdout its
results (action-set) as YAML and its stdout and stderr. -o yaml|json
prints Juju's map of the unit's task (id, log, message, results, status,
timing, unit); times are local unless --utc. SERVICE/leader names the
service's leader when the action is queued.

Params are KEY=VALUE, a dotted KEY for nested params (backup.dest=/srv);
each VALUE is read as YAML (count=3 is a number, on=true a boolean) unless
--string-args. --params FILE reads a YAML or JSON map first; arguments
override it. The control plane checks them against the action's schema,
fills in its defaults and refuses what does not fit, before anything runs.

The action runs once, on the unit's machine, never beside one of the
unit's hooks; an agent that dies while it runs fails it. Exit status: 0
when the action completed; 1 when it failed (its message on stderr) or was
refused; 4 when --wait passed first (it keeps running: see
show-operation). --background prints the operation's id and returns.` + remoteEnvHelp,
		Example: `  fixpoint run db/0 backup dest=/srv/backup
  fixpoint run db/leader rotate-password --wait 2m
  fixpoint run web/1 dump --params params.yaml -o json
  fixpoint run db/0 backup --background && fixpoint show-operation 7`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "" && format != "json" && format != "yaml" {
				return exitf(exitFailed, "run: --format %q: use yaml or json (default: what the action logged and set)", format)
			}
			params, err := actionParams(paramsFile, args[2:], stringArgs)
			if err != nil {
				return exitf(exitFailed, "run %s %s: %v", args[0], args[1], err)
			}
			c, err := r.client()
			if err != nil {
				return err
			}
			return runOperation(cmd, c, &api.Enqueue{Unit: args[0], Action: args[1], Params: params}, wait, background, format, timeZone(utc))
		},
	}
	r.flags(cmd)
	r.envFlag(cmd)
	cmd.Flags().StringVar(&paramsFile, "params", "", "YAML or JSON file of params; KEY=VALUE arguments override it")
	cmd.Flags().BoolVar(&stringArgs, "string-args", false, "take every KEY=VALUE value as a string, not YAML")
	cmd.Flags().DurationVar(&wait, "wait", defaultOperationWait, "how long to wait for the action to finish")
	cmd.Flags().BoolVar(&background, "background", false, "queue the action, print its operation id and return")
	cmd.Flags().StringVarP(&format, "format", "o", "", "print the unit's task as yaml or json, as juju run --format does")
	cmd.Flags().BoolVar(&utc, "utc", false, "print times in UTC, not local time")
	return cmd
}

// actionParams reads --params and KEY=VALUE arguments into params.
func actionParams(file string, args []string, strs bool) (map[string]any, error) {
	params := map[string]any{}
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--params: %w", err)
		}
		if len(b) > model.MaxActionBytes {
			return nil, fmt.Errorf("--params %s: %d bytes; params are at most %d", file, len(b), model.MaxActionBytes)
		}
		var m map[string]any
		if err := yaml.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("--params %s: not a YAML or JSON map: %w", file, err)
		}
		for k, v := range m {
			params[k] = v
		}
	}
	for _, arg := range args {
		if err := setParam(params, arg, strs); err != nil {
			return nil, err
		}
	}
	if len(params) == 0 {
		return nil, nil
	}
	return jsonValues(params)
}

// setParam sets one KEY=VALUE argument in params; a dotted KEY makes
// nested maps.
func setParam(params map[string]any, arg string, strs bool) error {
	key, raw, ok := strings.Cut(arg, "=")
	if !ok || key == "" {
		return fmt.Errorf("argument %q is not KEY=VALUE", arg)
	}
	var value any = raw
	if !strs && raw != "" {
		if err := yaml.Unmarshal([]byte(raw), &value); err != nil {
			return fmt.Errorf("%s: value %q is not YAML (pass --string-args to take it as a string): %w", key, raw, err)
		}
	}
	parts := strings.Split(key, ".")
	for _, p := range parts[:len(parts)-1] {
		if p == "" {
			return fmt.Errorf("argument %q: empty part in key %q", arg, key)
		}
	}
	charmapi.SetPath(params, parts, value)
	return nil
}

// runOperation queues e and, unless background, waits for it and prints
// it: what run and exec share.
func runOperation(cmd *cobra.Command, c *api.Client, e *api.Enqueue, wait time.Duration, background bool, format string, loc *time.Location) error {
	what := e.Action
	if e.Exec != "" {
		what = "exec"
	}
	id, err := c.Enqueue(cmd.Context(), e)
	if err != nil {
		// The control plane's refusal names the action and the unit.
		return exitf(exitFailed, "%v", err)
	}
	if background {
		fmt.Fprintf(cmd.OutOrStdout(), "Scheduled operation %d (%s on %s). Check its status with: fixpoint show-operation %d\n", id, what, e.Unit, id)
		return nil
	}
	a, err := awaitOperation(cmd.Context(), c, id, wait)
	if err != nil {
		return exitf(exitFailed, "operation %d: %v", id, err)
	}
	if !a.Finished() {
		if format != "" {
			_ = printOperation(cmd.OutOrStdout(), a, format, loc)
		}
		return exitf(exitTimeout, "operation %d (%s on %s) is still %s after %s; it keeps going: fixpoint show-operation %d --wait 10m", id, what, a.Unit, a.Status, wait, id)
	}
	if format != "" {
		if err := printOperation(cmd.OutOrStdout(), a, format, loc); err != nil {
			return err
		}
	} else if e.Exec != "" {
		printExec(cmd.OutOrStdout(), cmd.ErrOrStderr(), a)
	} else {
		printAction(cmd.OutOrStdout(), cmd.ErrOrStderr(), a, loc)
	}
	if a.Name == model.ExecName && a.Status == model.ActionCompleted {
		if code := returnCode(a); code != 0 {
			return &exitError{code: code, msg: ""}
		}
		return nil
	}
	if a.Status == model.ActionFailed {
		return exitf(exitFailed, "operation %d (%s on %s) failed: %s", a.ID, what, a.Unit, a.Message)
	}
	return nil
}

// awaitOperation waits up to wait for operation id to finish, in long
// polls the control plane bounds.
func awaitOperation(ctx context.Context, c *api.Client, id int, wait time.Duration) (*model.Action, error) {
	deadline := time.Now().Add(wait)
	for {
		left := time.Until(deadline)
		a, err := c.Operation(ctx, id, min(max(left, 0), 30*time.Second))
		if err != nil {
			return nil, err
		}
		if a.Finished() || time.Until(deadline) <= 0 {
			return a, nil
		}
	}
}

// printAction prints a finished action as juju run does by default: its
// log on stderr (Juju's progress), then on stdout "Action id N failed:
// MESSAGE" when it failed, its results but return-code, stdout and stderr
// as YAML, and its stdout and stderr.
func printAction(stdout, stderr io.Writer, a *model.Action, loc *time.Location) {
	for _, l := range a.Log {
		fmt.Fprintf(stderr, "%s %s\n", time.Unix(0, l.Time).In(loc).Format("15:04:05"), escapeControl(l.Message, false))
	}
	if len(a.Log) > 0 {
		fmt.Fprintln(stderr)
	}
	out := fmt.Sprintf("Task %d %s\n", a.ID, a.Status)
	if len(a.Results) > 0 {
		out = ""
		results := map[string]any{}
		for k, v := range a.Results {
			// Juju prints the keys in lower case.
			if k := strings.ToLower(k); !plainHidden[k] {
				results[k] = model.WholeNumbers(v)
			}
		}
		if len(results) > 0 {
			var b strings.Builder
			if err := writeJuju(&b, results, "yaml"); err == nil {
				out = b.String()
			}
		}
	}
	if a.Status == model.ActionFailed {
		fmt.Fprintf(stdout, "Action id %d failed: %s\n", a.ID, escapeControl(a.Message, false))
	}
	fmt.Fprintln(stdout, out)
	for _, k := range []string{"stdout", "stderr"} {
		if s, _ := a.Results[k].(string); s != "" {
			fmt.Fprintln(stdout, strings.Trim(s, "\n"))
		}
	}
}

// plainHidden are the results juju run leaves out of its results by
// default: it prints stdout and stderr after them.
var plainHidden = map[string]bool{"return-code": true, "stdout": true, "stderr": true, "stdout-encoding": true, "stderr-encoding": true}

// printExec prints a command's stdout and stderr where they belong.
func printExec(stdout, stderr io.Writer, a *model.Action) {
	if s, _ := a.Results["stdout"].(string); s != "" {
		fmt.Fprint(stdout, s)
	}
	if s, _ := a.Results["stderr"].(string); s != "" {
		fmt.Fprintln(stderr, strings.TrimRight(s, "\n"))
	}
}

// returnCode is an exec's exit status, 1 when it has none.
func returnCode(a *model.Action) int {
	if f, ok := a.Results["return-code"].(float64); ok {
		if f < 0 || f > 255 {
			return 1
		}
		return int(f)
	}
	return 1
}

// printOperation prints a as run and exec -o yaml|json print it: Juju's
// map of the unit's task.
func printOperation(w io.Writer, a *model.Action, format string, loc *time.Location) error {
	return writeJuju(w, runView(a, loc), format)
}

// jsonValues makes params what the control plane reads: JSON values
// (YAML's integers become numbers; a map with keys that are not strings
// is refused).
func jsonValues(params map[string]any) (map[string]any, error) {
	b, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("params: %w (keys must be strings)", err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("params: %w", err)
	}
	return out, nil
}
