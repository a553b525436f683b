package fleet_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/fleet"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// cluster adapts a raftstore.Store to fleet.Cluster, as cmd/fixpoint does.
type cluster struct{ *raftstore.Store }

func (c cluster) Env(name string) engine.Store { return c.Store.Env(name) }

// openStore bootstraps a one-node store on 127.0.0.1 whose feature level
// holds environments.
func openStore(t *testing.T) *raftstore.Store {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := raftstore.Open(ctx, raftstore.Config{NodeID: "n1", DataDir: t.TempDir(), RaftAddr: "127.0.0.1:0",
		HTTPAddr: ln.Addr().String(), Bootstrap: true, Version: "test"})
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	srv := &http.Server{Handler: s.Handler()}
	go srv.Serve(ln)
	t.Cleanup(func() {
		srv.Close()
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	rafttest.Eventually(t, time.Minute, "the cluster's level holds environments", func() error {
		if got := s.ClusterLevel().Level; got < model.LevelRecorded {
			return fmt.Errorf("cluster level %d", got)
		}
		return nil
	})
	return s
}

// deployIn deploys one db service of a tiny charm, units of it, to env.
func deployIn(env string, units int) *model.Command {
	meta := model.CharmMeta{Name: "db", Provides: map[string]model.Endpoint{"db": {Interface: "sql"}}}
	name := env
	if name == "" {
		name = "test"
	}
	return &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{
		Env: model.Environment{
			APIVersion: "fixpoint/v1",
			Name:       name,
			Services:   map[string]model.ServiceSpec{"db": {Charm: "./db", CharmHash: "h1", Units: &units}},
		},
		Charms: map[string]*model.Charm{"h1": {Hash: "h1", Meta: meta}},
	}}
}

// startFleet runs a fleet over s until the test ends.
func startFleet(t *testing.T, s *raftstore.Store) *fleet.Fleet {
	t.Helper()
	f := fleet.New(cluster{s}, engine.Options{IsLeader: s.IsLeader})
	ctx, cancel := context.WithCancel(context.Background())
	done := f.Start(ctx)
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return f
}

// addEnv adds environment name and waits for the fleet's controller of it.
func addEnv(t *testing.T, ctx context.Context, s *raftstore.Store, f *fleet.Fleet, name string) string {
	t.Helper()
	uuid, err := s.AddEnv(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	rafttest.Until(t, time.Minute, "a controller for "+name, func() bool { return f.Controller(name) != nil })
	return uuid
}

// setup is a store of two environments, the default and dev, each with
// a stale db/0 on machine m1, and a fleet following it.
func setup(t *testing.T) (context.Context, *raftstore.Store, *fleet.Fleet, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	s := openStore(t)
	f := startFleet(t, s)
	uuid := addEnv(t, ctx, s, f, "dev")
	if _, err := s.Env("").Apply(ctx, deployIn("", 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Env("dev").Apply(ctx, deployIn("dev", 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(ctx, &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: "m1", Address: "10.0.0.1"}}); err != nil {
		t.Fatal(err)
	}
	return ctx, s, f, uuid
}

// reconciles is db/0's count of reconciles in env.
func reconciles(t *testing.T, s *raftstore.Store, env string) int {
	t.Helper()
	var n int
	if err := s.Env(env).View(func(st *model.State) error {
		n = st.Units["db/0"].Reconciles
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// report is a successful run of w.
func report(w wire.Work) wire.Report {
	return wire.Report{Unit: w.Unit, Hash: w.Hash, Env: w.Env, Output: []byte(`{"status": {"state": "active"}}`)}
}
