package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/engine/charm"
	"github.com/fixpoint/fixpoint/model"
)

// Edits by command change the environment's desired document, as the
// control plane holds it (GET /v1/env): read it, change a copy, check the
// copy with the rules apply uses (charm.CheckEdited, model.Resolve), and
// deploy it whole through apply's path, stamped with the revision read.
// An environment that moved meanwhile refuses the deploy (409 conflict);
// the edit is then made again on a fresh read, so that no other edit is
// lost, at most maxEditAttempts times.

// maxEditAttempts bounds the reads of an edit whose environment keeps
// moving under it.
const maxEditAttempts = 8

// errEnvMoved marks an edit planned against a revision that is no longer
// the environment's: it is made again on a fresh read.
var errEnvMoved = errors.New("environment moved")

// editOpts are the flags every edit shares with apply.
type editOpts struct {
	r                                   remote
	repo                                string
	wait, keepGoing, failOnBlocked, yes bool
	timeout                             time.Duration
}

// flags adds the shared flags to cmd; removes adds --yes, for the edits
// that take something away.
func (o *editOpts) flags(cmd *cobra.Command, removes bool) {
	o.r.flags(cmd)
	o.r.envFlag(cmd)
	cmd.Flags().BoolVar(&o.wait, "wait", false, "wait for the fixed point, showing progress (exit codes as apply --wait)")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 10*time.Minute, "with --wait, how long to wait")
	keepGoingFlag(cmd, &o.keepGoing)
	failOnBlockedFlag(cmd, &o.failOnBlocked)
	if removes {
		cmd.Flags().BoolVar(&o.yes, "yes", false, "remove without asking (without it, and without a terminal, nothing is removed and the exit code is 2)")
	}
}

// edit is one edit by command.
type edit struct {
	// what names the edit in messages: "deploy web".
	what string
	// fresh names the services whose charm and resources the edit
	// brings, located and read here; every other service keeps what the
	// document holds.
	fresh []string
	// allowOutside lets the resource files named on the command line in,
	// wherever they are.
	allowOutside []string
	// removeUnits are the exact units the edit removes.
	removeUnits []string
	// change edits env, a copy of doc's environment.
	change func(ctx context.Context, doc *api.EnvDoc, env *model.Environment) error
	// confirm guards removals; nil lets the plan through.
	confirm *confirmRemovals
	// secretValues are values of user secrets the edit sets, by name then
	// key; every other user secret keeps its latest revision.
	secretValues map[string]map[string]string
	// quiet prints no plan (the juju front prints Juju's output instead).
	quiet bool
}

// run makes the edit, again on a fresh read while the environment moves
// under it, then waits for the fixed point when asked.
func (o *editOpts) run(ctx context.Context, e *edit) error {
	c, err := o.r.client()
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		err = o.once(ctx, c, e)
		if !errors.Is(err, errEnvMoved) {
			break
		}
		if attempt == maxEditAttempts {
			return exitf(exitFailed, "%s: the environment changed under this edit %d times in a row (other edits landed first); nothing was changed by it: run it again", e.what, attempt)
		}
		fmt.Fprintf(os.Stderr, "%s: another change landed first; reading the environment again\n", e.what)
	}
	if err != nil || !o.wait {
		return err
	}
	code, sum, err := waitConverged(ctx, c, &progress{w: os.Stdout}, o.timeout, o.keepGoing)
	if err != nil {
		return exitf(exitFailed, "%v", err)
	}
	return convergeExit(code, sum, finalTable(ctx, c, sum), o.timeout, o.failOnBlocked, o.keepGoing)
}

// readEnv reads the environment's document.
func readEnv(ctx context.Context, c *api.Client) (*api.EnvDoc, error) {
	doc, err := c.Env(ctx)
	switch {
	case api.IsUnknownRoute(err):
		return nil, exitf(exitFailed, "this control plane does not serve its environment's document (GET /v1/env); upgrade every server to this release, or edit the environment file and apply it")
	case errors.Is(err, api.ErrNotFound) && c.EnvName() != "":
		// An environment added (fixpoint env add, juju add-model) and
		// not deployed to yet: its edits start from an empty document.
		return &api.EnvDoc{Name: c.EnvName(), Env: model.Environment{APIVersion: model.APIVersion, Name: c.EnvName(), Services: map[string]model.ServiceSpec{}}}, nil
	case errors.Is(err, api.ErrNotFound):
		return nil, exitf(exitFailed, "no environment has been applied on this control plane yet: apply one first (fixpoint apply -f env.cue), then edit it by command")
	case err != nil:
		return nil, exitf(exitFailed, "read the environment: %v", err)
	}
	if doc.Env.Services == nil {
		doc.Env.Services = map[string]model.ServiceSpec{}
	}
	return doc, nil
}

// once reads the document, edits a copy, checks it and deploys it,
// stamped with the revision read. errEnvMoved says another change landed
// first.
func (o *editOpts) once(ctx context.Context, c *api.Client, e *edit) error {
	doc, err := readEnv(ctx, c)
	if err != nil {
		return err
	}
	env := model.EditCopy(&doc.Env)
	if err := e.change(ctx, doc, env); err != nil {
		if errors.Is(err, errEnvMoved) {
			return err
		}
		var ee *exitError
		if errors.As(err, &ee) {
			return err
		}
		return exitf(exitFailed, "%s: %v; nothing was changed", e.what, err)
	}
	wd, err := os.Getwd()
	if err != nil {
		return exitf(exitFailed, "%s: the working directory: %v", e.what, err)
	}
	checked, err := charm.CheckEdited(charm.Options{CacheDir: cacheDir(o.r.dataDir), Repository: o.repo, AllowOutside: e.allowOutside}, wd, env, doc.Charms, e.fresh...)
	if err != nil {
		return exitf(exitFailed, "%s: %v\nnothing was changed", e.what, err)
	}
	// No user secret's value is sent but those the edit sets: each other
	// keeps its latest revision (the document does not say where its
	// values were read).
	p := &prepared{
		env: checked.Env, paths: map[string]string{}, resources: checked.Resources, outside: checked.Outside, secretValues: e.secretValues,
		deploy: &model.Deploy{Env: *env, Charms: checked.Charms, BaseIndex: doc.Revision, RemoveUnits: e.removeUnits},
	}
	for _, packed := range checked.Packed {
		p.paths[packed.Hash] = packed.Path
	}
	err = deploy(ctx, c, p, e.quiet, e.confirm)
	if movedErr(err) {
		return errEnvMoved
	}
	return err
}

// movedErr says whether err is the control plane's refusal of a change
// stamped with a revision the environment has left: that conflict alone
// passes by reading again (a refusal for the cluster's level does not).
func movedErr(err error) bool {
	return errors.Is(err, errEnvMoved) || errors.Is(err, api.ErrEnvMoved)
}

// charmOf is the charm metadata of service name in doc.
func charmOf(doc *api.EnvDoc, env *model.Environment, name string) (*model.CharmMeta, error) {
	spec, ok := env.Services[name]
	if !ok {
		return nil, fmt.Errorf("environment %s has no service %q (services: %s)", env.Name, name, listNames(env.Services))
	}
	ch := doc.Charms[spec.CharmHash]
	if ch == nil {
		return nil, fmt.Errorf("service %s: the control plane sent no metadata for its charm %s; read the environment again", name, model.ShortHash(spec.CharmHash))
	}
	return &ch.Meta, nil
}

// listNames lists a map's keys, sorted, for a message.
func listNames[V any](m map[string]V) string {
	if len(m) == 0 {
		return "none"
	}
	return strings.Join(slices.Sorted(maps.Keys(m)), ", ")
}
