package main

import (
	"context"
	"fmt"
	"time"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/engine/charm"
	"github.com/fixpoint/fixpoint/model"
)

// deployment is one environment checked and packed ahead of its round:
// the command `fixpoint apply` would send, and where its charms' archives
// are.
type deployment struct {
	deploy *model.Deploy
	paths  map[string]string // charm hash → archive
}

// packEnv checks the environment at path and packs its charms into
// cacheDir, as `fixpoint apply` does before it talks to the control plane.
func packEnv(cacheDir, path string) (*deployment, error) {
	checked, err := charm.CheckAndPack(cacheDir, path)
	if err != nil {
		return nil, err
	}
	d := &deployment{deploy: &model.Deploy{Env: *checked.Env.Env, Charms: checked.Charms}, paths: map[string]string{}}
	for _, p := range checked.Packed {
		d.paths[p.Hash] = p.Path
	}
	return d, nil
}

// deployPacked applies d as `fixpoint apply` does: plan against the
// running environment, upload the charms the control plane lacks, deploy
// stamped with the index planned against. It returns the index the
// deploy was applied at.
func deployPacked(addr, token string, d *deployment) (uint64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := api.NewClient([]string{addr}, token, nil)
	plan, err := c.Plan(ctx, d.deploy)
	if err != nil {
		return 0, fmt.Errorf("plan: %w", err)
	}
	for _, hash := range plan.Missing {
		path, ok := d.paths[hash]
		if !ok {
			return 0, fmt.Errorf("the control plane lacks charm %s, which the environment does not pack", hash)
		}
		if err := c.UploadCharm(ctx, hash, path); err != nil {
			return 0, fmt.Errorf("upload charm %s: %w", hash, err)
		}
	}
	deploy := *d.deploy
	deploy.BaseIndex = plan.EnvIndex
	resp, err := c.Deploy(ctx, &deploy)
	if err != nil {
		return 0, fmt.Errorf("deploy: %w", err)
	}
	return resp.Index, nil
}
