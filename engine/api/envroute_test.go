package api_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// TestEnvPrefixRoutesToItsEnvironment: a client naming an environment
// (WithEnv) deploys, plans, reads status and the document of that
// environment under /v1/envs/{env}/, leaving the default one as it is;
// the default environment answers under its own name as unprefixed; an
// environment that does not exist is 404 listing those that do; a file
// naming another environment is refused before the log moves; the
// cluster's routes stay unprefixed for such a client.
func TestEnvPrefixRoutesToItsEnvironment(t *testing.T) {
	n := startNodeOf(t, "n1", true, nil)
	op := api.NewClient([]string{n.addr}, operatorToken, nil)
	if _, err := op.AddEnv(ctxT(t), api.NewEnv{Name: "dev"}); err != nil {
		t.Fatal(err)
	}
	deploy := uploadedDeploy(t, n)
	def := deploy(1)
	def.Env.Name = "prod"
	if _, err := op.Deploy(ctxT(t), def); err != nil {
		t.Fatalf("deploy the default environment: %v", err)
	}
	dev := op.WithEnv("dev")
	if dev.EnvName() != "dev" || op.EnvName() != "" {
		t.Fatalf("WithEnv changed the client it was called on: %q, %q", dev.EnvName(), op.EnvName())
	}
	d := deploy(3)
	d.Env.Name = "dev"
	plan, err := dev.Plan(ctxT(t), d)
	if err != nil || plan.Name != "dev" || len(plan.Changes) == 0 {
		t.Fatalf("plan dev: %+v, %v", plan, err)
	}
	if _, err := dev.Deploy(ctxT(t), d); err != nil {
		t.Fatalf("deploy dev: %v", err)
	}
	rafttest.Eventually(t, time.Minute, "dev's status shows its 3 units, the default's its 1", func() error {
		st, err := dev.Status(ctxT(t), false, 0, 0)
		if err != nil {
			return err
		}
		ds, err := op.Status(ctxT(t), false, 0, 0)
		if err != nil {
			return err
		}
		if len(st.Units) != 3 || st.Environment != "dev" || len(ds.Units) != 1 || ds.Environment != "prod" {
			return fmt.Errorf("dev %s with %d units, default %s with %d", st.Environment, len(st.Units), ds.Environment, len(ds.Units))
		}
		return nil
	})
	doc, err := dev.Env(ctxT(t))
	if err != nil || doc.Name != "dev" || len(doc.Env.Services) != 1 {
		t.Fatalf("dev's document: %+v, %v", doc, err)
	}
	byName, err := op.WithEnv("prod").Env(ctxT(t))
	if err != nil || byName.Name != "prod" || byName.Revision == doc.Revision {
		t.Fatalf("the default environment by its name: %+v, %v", byName, err)
	}
	if envs, err := dev.Envs(ctxT(t)); err != nil || len(envs) != 2 {
		t.Errorf("a client of dev lists the cluster's environments unprefixed: %+v, %v", envs, err)
	}
	if _, err := op.WithEnv("nope").Status(ctxT(t), false, 0, 0); !errors.Is(err, api.ErrNotFound) || !strings.Contains(err.Error(), "dev") || !strings.Contains(err.Error(), "fixpoint env add nope") {
		t.Errorf("status of an environment that does not exist: %v", err)
	}
	before := n.store.Index()
	wrong := deploy(1)
	wrong.Env.Name = "prod"
	if _, err := dev.Deploy(ctxT(t), wrong); !errors.Is(err, api.ErrRefused) || !strings.Contains(err.Error(), "applied to environment") {
		t.Errorf("a file naming prod deployed to dev: %v", err)
	}
	if _, err := dev.Plan(ctxT(t), wrong); !errors.Is(err, api.ErrRefused) || !strings.Contains(err.Error(), "applied to environment") {
		t.Errorf("a file naming prod planned in dev: %v", err)
	}
	if _, err := op.Plan(ctxT(t), d); !errors.Is(err, api.ErrRefused) || !strings.Contains(err.Error(), "not the default environment") {
		t.Errorf("dev's file planned in the default environment: %v", err)
	}
	if got := n.store.Index(); got != before {
		t.Errorf("the refused deploy moved the log from %d to %d", before, got)
	}
	// The raw path names the environment; a reader of dev's routes sees
	// only dev's units.
	code, _, body := call(t, http.MethodGet, n.addr+"/v1/envs/dev/units/db/2", operatorToken, nil)
	if code != http.StatusOK || !strings.Contains(string(body), `"db/2"`) {
		t.Errorf("GET /v1/envs/dev/units/db/2: %d %s", code, body)
	}
	if code, _, _ := call(t, http.MethodGet, n.addr+"/v1/units/db/2", operatorToken, nil); code != http.StatusNotFound {
		t.Errorf("GET /v1/units/db/2 of the default environment, which has db/0 alone: %d, want 404", code)
	}
}

// TestEventsAndDebugLogPerEnvironment: two environments' db/0 each have
// their own events and debug-log lines; a read under one environment's
// prefix shows its own alone, and the unprefixed read shows the default
// environment's (and the cluster's machine lines) alone.
func TestEventsAndDebugLogPerEnvironment(t *testing.T) {
	n := startNodeOf(t, "n1", true, nil)
	op := api.NewClient([]string{n.addr}, operatorToken, nil)
	if _, err := op.AddEnv(ctxT(t), api.NewEnv{Name: "dev"}); err != nil {
		t.Fatal(err)
	}
	deploy := uploadedDeploy(t, n)
	def, d := deploy(1), deploy(2)
	def.Env.Name, d.Env.Name = "prod", "dev"
	if _, err := op.Deploy(ctxT(t), def); err != nil {
		t.Fatal(err)
	}
	dev := op.WithEnv("dev")
	if _, err := dev.Deploy(ctxT(t), d); err != nil {
		t.Fatal(err)
	}
	lines := []model.LogLine{
		{Time: 1, Unit: "db/0", Machine: "m1", Level: "info", Origin: model.OriginHook, Message: "prod's db/0"},
		{Time: 1, Unit: "db/0", Env: "dev", Machine: "m1", Level: "info", Origin: model.OriginHook, Message: "dev's db/0"},
		{Time: 1, Machine: "m1", Level: "info", Origin: model.OriginAgent, Message: "machine m1"},
	}
	if _, err := n.store.Apply(ctxT(t), &model.Command{Op: model.OpLogs, Logs: &model.LogBatch{Lines: lines}}); err != nil {
		t.Fatal(err)
	}
	read := func(c *api.Client) []string {
		t.Helper()
		got, err := c.DebugLog(ctxT(t), api.DebugLogQuery{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range got.Lines {
			out = append(out, l.Message)
		}
		return out
	}
	if got := read(dev); len(got) != 1 || got[0] != "dev's db/0" {
		t.Errorf("dev's debug log: %q", got)
	}
	if got := read(op); len(got) != 2 || got[0] != "prod's db/0" || got[1] != "machine m1" {
		t.Errorf("the default environment's debug log: %q", got)
	}
	rafttest.Eventually(t, time.Minute, "each environment's events of its own units", func() error {
		de, err := dev.Events(ctxT(t), "db", 0, 0, 0)
		if err != nil {
			return err
		}
		pe, err := op.Events(ctxT(t), "", 0, 0, 0)
		if err != nil {
			return err
		}
		devUnits, prodUnits := map[string]bool{}, map[string]bool{}
		for _, e := range de.Events {
			if e.Env != "dev" {
				return fmt.Errorf("dev's events hold %+v", e)
			}
			devUnits[e.Unit] = true
		}
		for _, e := range pe.Events {
			if e.Env != "" {
				return fmt.Errorf("the default environment's events hold %+v", e)
			}
			prodUnits[e.Unit] = true
		}
		if len(devUnits) != 2 || len(prodUnits) != 1 {
			return fmt.Errorf("dev's events name %v, the default's %v", devUnits, prodUnits)
		}
		return nil
	})
}
