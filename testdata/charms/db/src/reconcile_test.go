package main

// Tests of the db charm written with charmtest: reconcile is called
// in-process on universes built in a few lines, and the demo environment
// is simulated under many schedules with the web charm's packed hook.
// Run them with `go test` in this directory.

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi/charmtest"
	"github.com/fixpoint/fixpoint/charmapi/charmtest/charmdir"
)

func wantPassword(secret, service string) string {
	sum := sha256.Sum256([]byte(secret + "/" + service))
	return hex.EncodeToString(sum[:])[:16]
}

func TestGrantsOnlyUnitsThatAsked(t *testing.T) {
	b := charmtest.NewUniverse("db/0").Leader().Address("10.0.0.1").Config("port", 6379).Config("secret", "s3cret")
	b.Provides("db", "web").ID(1).Interface("kv").
		Unit("web/0", "database", "shop").
		Unit("web/1"). // has not asked
		Unit("web/10", "database", "shop").
		Unit("web/2", "database", "orders")
	b.Provides("db", "admin").ID(4).Interface("kv").Units("admin/0")
	b.Peer("cluster").ID(2).Unit("db/1", "address", "10.0.0.2")

	charmtest.Run(t, charmtest.Func(reconcile), b.Universe()).
		ExpectRelations("db:1", "db:4", "cluster:2").
		ExpectLocal("db:1", map[string]string{
			"host": "10.0.0.1", "port": "6379", "user": "web", "password": wantPassword("s3cret", "web"),
			"database":      "orders", // the lexically smallest of those asked
			"allowed-units": "web/0 web/2 web/10",
		}).
		ExpectApp("db:1", nil).
		ExpectLocal("db:4", map[string]string{"host": "10.0.0.1", "port": "6379"}). // nobody asked
		ExpectLocal("cluster:2", map[string]string{"address": "10.0.0.1"}).
		ExpectApp("cluster:2", map[string]string{"primary": "db/0"}).
		ExpectStatus("active", "primary, 3 clients")
}

func TestFollowerFollowsThePrimary(t *testing.T) {
	b := charmtest.NewUniverse("db/1").Address("10.0.0.2")
	b.Provides("db", "web").ID(1).Unit("web/0", "database", "shop")
	peers := b.Peer("cluster").ID(2).Unit("db/0", "address", "10.0.0.1")

	// Before the leader has named itself primary.
	charmtest.Run(t, charmtest.Func(reconcile), b.Universe()).
		ExpectApp("cluster:2", nil).
		ExpectLocalKey("db:1", "password", wantPassword("fixpoint-demo", "web")). // the default secret
		ExpectStatus("waiting", "waiting for a primary, 1 client")

	peers.App("primary", "db/0")
	charmtest.Run(t, charmtest.Func(reconcile), b.Universe()).
		ExpectApp("cluster:2", nil).
		ExpectLocal("cluster:2", map[string]string{"address": "10.0.0.2"}).
		ExpectStatus("active", "replica of db/0, 1 client")
}

func TestBadConfigIsAnError(t *testing.T) {
	u := charmtest.NewUniverse("db/0").Config("port", "not a port").Universe()
	if _, err := charmtest.Try(t.Context(), charmtest.Func(reconcile), u, t.TempDir()); err == nil {
		t.Fatal("a string port was accepted")
	}
}

// TestShopConverges deploys 3 db units (this reconcile function, called
// in-process) with 2 web units (the web charm, packed and run as a
// process) and checks every schedule reaches the same fixed point.
func TestShopConverges(t *testing.T) {
	env := charmdir.NewEnv("shop")
	env.Deploy("db", "..").Units(3).Config("secret", "s3cret")
	env.Deploy("web", "../../web").Units(2)
	env.Relate("web:db", "db:db")
	env.Hook("db", charmtest.Func(reconcile))
	rep := charmtest.Converges(t, env, charmtest.SimOptions{Schedules: 16, Seed: 1})

	final := rep.FixedPoints[0].Settings
	for _, db := range []string{"db/0", "db/1", "db/2"} {
		if got := final[db+" relations.db:1.local.allowed-units"]; got != "web/0 web/1" {
			t.Errorf("%s allows %q", db, got)
		}
	}
	if got := final["web/1 status"]; got != "active: connected to 127.0.0.1:6379 db shop as web" {
		t.Errorf("web/1 status %q", got)
	}
}
