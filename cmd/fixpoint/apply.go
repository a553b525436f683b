package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/engine/charm"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/schemas"
)

// prepared is an environment loaded, its charms packed and the whole
// checked: ready to deploy.
type prepared struct {
	deploy *model.Deploy
	env    *schemas.Env
	paths  map[string]string // charm hash → archive path
	// resources are the resource files by digest; outside, those of them
	// outside the environment's directory, which plan and apply name.
	resources map[string]string
	outside   []charm.OutsideResource
	// secretValues are the user secrets' values by name then key, read
	// at prepare and sent with the plan and the deploy only.
	secretValues map[string]map[string]string
}

// prepare loads the environment files, packs every charm into cacheDir
// (bare charm names found in the repository repo) and checks the result as
// the control plane will; every problem is reported at its file:line:col.
// Resources may name files outside the environment's directory only inside
// the paths allowOutside lists.
func prepare(files []string, cacheDir, repo string, allowOutside []string) (*prepared, error) {
	checked, err := charm.CheckWith(charm.Options{CacheDir: cacheDir, Repository: repo, AllowOutside: allowOutside}, files...)
	if err != nil {
		return nil, exitf(exitFailed, "%v", err)
	}
	values, err := readSecretValues(checked.Env)
	if err != nil {
		return nil, err
	}
	p := &prepared{env: checked.Env, paths: map[string]string{}, resources: checked.Resources, outside: checked.Outside, secretValues: values, deploy: &model.Deploy{Env: *checked.Env.Env, Charms: checked.Charms}}
	for _, packed := range checked.Packed {
		p.paths[packed.Hash] = packed.Path
	}
	return p, nil
}

// planAgainst asks the control plane what applying p would change in the
// running environment (a linearizable read, planned where the state is).
func planAgainst(ctx context.Context, c *api.Client, p *prepared) (*api.Plan, error) {
	plan, err := c.PlanSecrets(ctx, p.deploy, p.secretValues)
	if api.IsUnknownRoute(err) {
		// A control plane from before POST /v1/plan.
		return planFromState(ctx, c, p)
	}
	if err != nil {
		return nil, refusal("plan against the running environment", p.env, err)
	}
	return plan, nil
}

// planFromState plans p against the whole state, read (linearizably)
// from a control plane that does not plan: what the control plane does
// for POST /v1/plan (api.NewPlan), on this side.
func planFromState(ctx context.Context, c *api.Client, p *prepared) (*api.Plan, error) {
	st, err := c.State(ctx, false)
	if err != nil {
		return nil, exitf(exitFailed, "read the current environment: %v", err)
	}
	desired, err := model.Resolve(&p.deploy.Env, p.deploy.Charms)
	if err != nil {
		return nil, exitf(exitFailed, "%v", err)
	}
	plan, err := api.NewPlan(st, p.deploy, desired)
	if err != nil {
		return nil, refusal("plan", p.env, err)
	}
	return plan, nil
}

// deploy uploads the charms and applies the environment as one command,
// stamped with the index it was planned against. It prints the plan. A
// plan that removes something goes through confirm first (nil: it is
// applied as it is).
func deploy(ctx context.Context, c *api.Client, p *prepared, quiet bool, confirm *confirmRemovals) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	plan, err := planAgainst(ctx, c, p)
	if err != nil {
		return err
	}
	// A deploy read at a revision (an edit by command) is planned and
	// applied against that revision only.
	base := p.deploy.BaseIndex
	if base != 0 && plan.EnvIndex != base {
		return errEnvMoved
	}
	if len(plan.Changes) == 0 {
		// A control plane restored from a backup lacks the files: the
		// same environment puts them back.
		if err := uploadMissing(ctx, c, p, plan); err != nil {
			return err
		}
		if !quiet {
			fmt.Println("environment unchanged")
		}
		return nil
	}
	printed, err := confirm.check(plan)
	if err != nil {
		return err
	}
	if err := uploadMissing(ctx, c, p, plan); err != nil {
		return err
	}
	d := *p.deploy
	if base == 0 {
		d.BaseIndex = plan.EnvIndex
	}
	resp, err := c.DeploySecrets(ctx, &d, p.secretValues)
	if err != nil {
		return refusal("apply", p.env, err)
	}
	if !quiet && !printed {
		for _, ch := range resp.Changes {
			fmt.Println(ch.String())
		}
		fmt.Printf("applied at index %d\n", resp.Index)
	}
	return nil
}

// uploadMissing uploads the charms and resource files of p the plan says
// the control plane lacks.
func uploadMissing(ctx context.Context, c *api.Client, p *prepared, plan *api.Plan) error {
	for _, hash := range plan.Missing {
		path, ok := p.paths[hash]
		if !ok {
			return exitf(exitFailed, "the control plane lacks charm %s, which this environment does not pack", model.ShortHash(hash))
		}
		if err := c.UploadCharm(ctx, hash, path); err != nil {
			return exitf(exitFailed, "upload charm %s: %v", model.ShortHash(hash), err)
		}
	}
	for _, digest := range plan.MissingResources {
		path, ok := p.resources[digest]
		if !ok {
			return exitf(exitFailed, "the control plane lacks resource %s, which this environment does not name", model.ShortHash(digest))
		}
		if err := c.UploadResource(ctx, digest, path); err != nil {
			return exitf(exitFailed, "upload resource %s (%s): %v", model.ShortHash(digest), path, err)
		}
	}
	return nil
}

func newPlanCmd() *cobra.Command {
	var r remote
	var files, allowOutside []string
	var warnUnits int
	var repo string
	cmd := &cobra.Command{
		Use:   "plan -f ENV.cue",
		Short: "Show what applying ENV would change",
		Long: `plan compares ENV with the running environment and lists what would change:
services, units added or going dying, relations, config keys (old -> new) and
charm revisions. A list of more than 10 units is summarised by its first and
last unit and its count; a service of more units than --warn-units (default
1,000) is warned about on stderr. Exit code 0: nothing would change; 2:
something would.`,
		Example: `  fixpoint plan -f env.cue && echo up to date`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := r.client()
			if err != nil {
				return err
			}
			p, err := prepare(files, cacheDir(r.dataDir), repo, allowOutside)
			if err != nil {
				return err
			}
			printOutside(os.Stdout, p)
			if err := r.fileEnv(cmd.Context(), c, p.deploy.Env.Name); err != nil {
				return err
			}
			plan, err := planAgainst(cmd.Context(), c, p)
			if err != nil {
				return err
			}
			if plan.Name != "" && plan.Name != p.deploy.Env.Name {
				fmt.Fprintf(os.Stderr, "warning: the running environment is named %q; applying this one renames it to %q (is --controller or --data-dir the one you meant?)\n", plan.Name, p.deploy.Env.Name)
			}
			warnLarge(os.Stderr, p.env, warnUnits)
			if len(plan.Changes) == 0 {
				fmt.Printf("no changes (environment at index %d)\n", plan.EnvIndex)
				return nil
			}
			for _, ch := range plan.Changes {
				fmt.Println(ch.String())
			}
			fmt.Printf("%d change(s) against index %d\n", len(plan.Changes), plan.EnvIndex)
			return exitf(exitChanges, "")
		},
	}
	r.flags(cmd)
	r.envFlag(cmd)
	cmd.Flags().StringSliceVarP(&files, "file", "f", nil, "environment file(s) or directory")
	warnUnitsFlag(cmd, &warnUnits)
	allowOutsideFlag(cmd, &allowOutside)
	repositoryFlag(cmd, &repo)
	return cmd
}

func newApplyCmd() *cobra.Command {
	var r remote
	var files, allowOutside []string
	var repo string
	var wait, failOnBlocked, keepGoing, yes bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "apply -f ENV.cue",
		Short: "Make ENV the running environment, as one change",
		Long: `apply packs the charms, checks ENV, and applies the whole change as one Raft
command stamped with the index it was planned against; if the environment
moved meanwhile it is refused and nothing changes. With --wait it shows
progress until the fixed point (exit 0), a unit error (3) or the timeout (4);
the fixed point over every unit but those on lost machines exits 5. It
judges the environment after this change: an error a unit had before it,
on a unit the change reaches, is not the answer (the unit runs again).
--keep-going waits for every unit not in error to settle before it names
the units in error and exits 3. The last line says how many units are
blocked, and --fail-on-blocked makes that exit 6.

A plan that removes services, relations, units or user secrets is shown
first and applied only when confirmed: on a terminal apply asks; otherwise
it needs --yes, and without it exits 2 with the plan, having changed
nothing.

User secrets (the environment's secrets:) are read from the files and
environment variables it names, here, and sent to the control plane with
the plan and the change; a value equal to the secret's latest revision
makes no new one.`,
		Example: `  fixpoint apply -f env.cue --wait --timeout 5m
  fixpoint apply -f env.cue --yes     # in a script, removals included`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := r.client()
			if err != nil {
				return err
			}
			p, err := prepare(files, cacheDir(r.dataDir), repo, allowOutside)
			if err != nil {
				return err
			}
			printOutside(os.Stdout, p)
			if err := r.fileEnv(cmd.Context(), c, p.deploy.Env.Name); err != nil {
				return err
			}
			if err := deploy(cmd.Context(), c, p, false, newConfirm(yes)); err != nil {
				return err
			}
			if !wait {
				return nil
			}
			code, sum, err := waitConverged(cmd.Context(), c, &progress{w: os.Stdout}, timeout, keepGoing)
			if err != nil {
				return exitf(exitFailed, "%v", err)
			}
			return convergeExit(code, sum, finalTable(cmd.Context(), c, sum), timeout, failOnBlocked, keepGoing)
		},
	}
	r.flags(cmd)
	r.envFlag(cmd)
	cmd.Flags().StringSliceVarP(&files, "file", "f", nil, "environment file(s) or directory")
	failOnBlockedFlag(cmd, &failOnBlocked)
	repositoryFlag(cmd, &repo)
	cmd.Flags().BoolVar(&yes, "yes", false, "apply a plan that removes services, relations, units or user secrets without asking")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait for the fixed point, showing progress")
	keepGoingFlag(cmd, &keepGoing)
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "with --wait, how long to wait")
	allowOutsideFlag(cmd, &allowOutside)
	return cmd
}

// allowOutsideFlag is --allow-outside: the files and directories outside
// the environment's directory that its resources may name.
func allowOutsideFlag(cmd *cobra.Command, allow *[]string) {
	cmd.Flags().StringArrayVar(allow, "allow-outside", nil, "a file or directory outside the environment file's directory whose files resources may name (repeatable); by default a resource must be inside that directory, symlinks resolved")
}

// printOutside names each resource read from outside the environment's
// directory, so that what leaves this machine is seen before it goes.
func printOutside(w io.Writer, p *prepared) {
	for _, o := range p.outside {
		fmt.Fprintf(w, "resource %s of %s reads %s, outside the environment's directory (--allow-outside)\n", o.Name, o.Service, o.Path)
	}
}

// convergeExit turns waitConverged's outcome into the command's exit,
// after the status table (full, when finalTable read it) or the summary by
// service. A fixed point with blocked units is still one (exit 0) unless
// failOnBlocked asks for exit 6 then; one that leaves out units on lost
// machines is not (exit 5). keepGoing says the wait went on past the
// first error: the exit names every unit in error.
func convergeExit(code int, sum *engine.Summary, full *engine.Status, timeout time.Duration, failOnBlocked, keepGoing bool) error {
	switch {
	case full != nil:
		fmt.Println()
		printStatus(os.Stdout, full)
	case sum != nil:
		fmt.Println()
		printSummary(os.Stdout, sum)
	}
	switch code {
	case exitOK:
		if blocked := blockedUnits(sum); failOnBlocked && len(blocked) > 0 {
			return exitf(exitBlocked, "converged, but %d unit(s) blocked: %s", len(sum.Blocked)+sum.MoreBlocked, strings.Join(blocked, "; "))
		}
		return nil
	case exitLost:
		return exitf(exitLost, "fixed point except units on lost machines: %s; start their agents again (the units run once they answer), or place the units elsewhere", strings.Join(lostMachineLines(sum.LostMachines), "; "))
	case exitUnitErr:
		if keepGoing {
			rest := "every other unit settled"
			if len(sum.LostMachines) > 0 {
				rest += " but those on lost machines: " + strings.Join(lostMachineLines(sum.LostMachines), "; ")
			}
			return exitf(exitUnitErr, "%d unit(s) in error: %s; %s", len(sum.Errors)+sum.MoreErrors, strings.Join(errorUnits(sum), "; "), rest)
		}
		unit, msg := sum.FirstError()
		if more := len(sum.Errors) + sum.MoreErrors - 1; more > 0 {
			return exitf(exitUnitErr, "unit %s is in error: %s (and %d more in error)", unit, msg, more)
		}
		return exitf(exitUnitErr, "unit %s is in error: %s", unit, msg)
	case exitTimeout:
		summary := "no status yet"
		if sum != nil {
			summary = sum.Summary
		}
		return exitf(exitTimeout, "no fixed point after %s: %s", timeout, summary)
	}
	return exitf(code, "")
}

// blockedUnits names the units whose workload says blocked, with why: the
// first ones by name, as the summary lists them, and how many more.
func blockedUnits(sum *engine.Summary) []string {
	if sum == nil {
		return nil
	}
	var names []string
	for _, u := range sum.Blocked {
		name := u.Unit
		if u.Message != "" {
			name += " (" + oneLine(u.Message) + ")"
		}
		names = append(names, name)
	}
	if sum.MoreBlocked > 0 {
		names = append(names, fmt.Sprintf("and %d more", sum.MoreBlocked))
	}
	return names
}

// errorUnits names the units in error, with their errors: the first ones
// by name, as the summary lists them, and how many more.
func errorUnits(sum *engine.Summary) []string {
	var out []string
	for _, e := range sum.Errors {
		out = append(out, fmt.Sprintf("%s (%s)", e.Unit, oneLine(e.Message)))
	}
	if sum.MoreErrors > 0 {
		out = append(out, fmt.Sprintf("and %d more", sum.MoreErrors))
	}
	return out
}

// keepGoingFlag adds --keep-going to a command that waits.
func keepGoingFlag(cmd *cobra.Command, v *bool) {
	cmd.Flags().BoolVar(v, "keep-going", false, "let a unit in error not end the wait: wait for every other unit to settle, then name the units in error and exit 3")
}

// failOnBlockedFlag adds --fail-on-blocked to a command that waits.
func failOnBlockedFlag(cmd *cobra.Command, v *bool) {
	cmd.Flags().BoolVar(v, "fail-on-blocked", false, "exit 6 when the fixed point has units whose workload status is blocked")
}

// cacheDir is where packed charms are kept between runs.
func cacheDir(dataDir string) string {
	if d, err := charm.DefaultCacheDir(); err == nil {
		return d
	}
	return filepath.Join(dataDir, "cache")
}
