package main

import (
	"context"
	"errors"
	"strings"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

// fileEnv points c at the environment an environment file named name
// applies to (docs/environments.md, part G): the one -e/--env names,
// which must be the file's; else the default environment when the file
// names it, when the cluster holds no other environment (which renames
// the default, as a v0.3.0 client does), or when the default is unnamed
// yet; else the environment of that name, which must exist. A
// disagreeing -e is refused before anything is sent. $FIXPOINT_ENV and
// the context's environment do not pick it: the file does.
func (r *remote) fileEnv(ctx context.Context, c *api.Client, name string) error {
	if e := r.envExplicit(); e != "" {
		if e != name {
			return exitf(exitFailed, "-e/--env %s disagrees with the environment file, which names environment %q: an environment file applies to the environment it names; drop -e, or change the file's name (nothing was sent)", e, name)
		}
		c.SetEnv(e)
		return nil
	}
	envs, err := c.Envs(ctx)
	switch {
	case errors.Is(err, api.ErrForbidden):
		// An environment's token, which may not list them: its
		// environment's routes by the file's name (the default
		// environment's name reaches the default one there).
		c.SetEnv(name)
		return nil
	case errors.Is(err, api.ErrNotFound):
		// A control plane without environments: its one environment.
		c.SetEnv("")
		return nil
	case err != nil:
		return exitf(exitFailed, "find the environment %q the file names: %v", name, err)
	}
	env, err := envForFile(envs, name)
	if err != nil {
		return exitf(exitFailed, "%v", err)
	}
	c.SetEnv(env)
	return nil
}

// envForFile is the environment, of envs (GET /v1/envs, the default
// first), that a file named name applies to: "" for the default one.
func envForFile(envs []api.EnvInfo, name string) (string, error) {
	var def *api.EnvInfo
	var others []string
	for i := range envs {
		if envs[i].Default {
			def = &envs[i]
			continue
		}
		if envs[i].Name == name {
			return name, nil
		}
		others = append(others, envs[i].Name)
	}
	if def == nil || name == def.Name || len(others) == 0 || def.Name == "" {
		return "", nil
	}
	return "", errors.New("the environment file names environment " + model.Quote(name, 72) + ", which does not exist; the cluster holds " + def.Name + " (the default) and " + strings.Join(others, ", ") +
		": add it first (fixpoint env add " + name + "), or give the file the name of the environment to apply it to")
}
