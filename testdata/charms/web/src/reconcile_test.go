package main

// Tests of the web charm written with charmtest. The charm writes web.conf
// in its working directory (a hook process runs in its unit's directory),
// so the tests that call reconcile in-process first move to a temporary
// directory.

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi/charmtest"
	"github.com/fixpoint/fixpoint/charmapi/charmtest/charmdir"
)

func webUniverse() *charmtest.UniverseBuilder {
	b := charmtest.NewUniverse("web/0").Leader().Address("10.0.1.1").Config("database", "shop").Config("port", 8080)
	b.Peer("cluster").ID(3).Unit("web/1", "address", "10.0.1.2", "port", "8080")
	return b
}

func granted(host, allowed string) []string {
	return []string{"host", host, "port", "6379", "user", "web", "password", "0123456789abcdef", "database", "shop", "allowed-units", allowed}
}

func TestBlockedWithoutADatabase(t *testing.T) {
	t.Chdir(t.TempDir())
	charmtest.Run(t, charmtest.Func(reconcile), webUniverse().Universe()).
		ExpectLocal("cluster:3", map[string]string{"address": "10.0.1.1", "port": "8080"}).
		ExpectStatus("blocked", "needs a db relation")
}

func TestWaitsUntilAllowed(t *testing.T) {
	t.Chdir(t.TempDir())
	b := webUniverse()
	db := b.Requires("db", "db").ID(1).Interface("kv").
		Unit("db/0", granted("10.0.0.1", "web/1")...).   // not us
		Unit("db/1", "host", "10.0.0.2", "port", "6379") // has not answered
	charmtest.Run(t, charmtest.Func(reconcile), b.Universe()).
		ExpectLocal("db:1", map[string]string{"database": "shop"}).
		ExpectStatus("waiting", "waiting for db access")
	if _, err := os.Stat("web.conf"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("web.conf written before access was granted (%v)", err)
	}

	// db/10 and db/2 list web/0: the lowest unit number wins.
	db.Unit("db/10", granted("10.0.0.10", "web/0 web/1")...).Unit("db/2", granted("10.0.0.2", "web/0 web/1")...)
	charmtest.Run(t, charmtest.Func(reconcile), b.Universe()).
		ExpectLocal("db:1", map[string]string{"database": "shop"}).
		ExpectStatus("active", "connected to 10.0.0.2:6379 db shop as web")
	conf, err := os.ReadFile("web.conf")
	if err != nil || !strings.Contains(string(conf), "host=10.0.0.2\n") {
		t.Errorf("web.conf: %q (%v)", conf, err)
	}
}

// TestConvergesWithThePackedDB runs this reconcile function in-process
// against the db charm's packed hook; one schedule at a time, since the
// in-process units share the test's working directory for web.conf.
func TestConvergesWithThePackedDB(t *testing.T) {
	env := charmdir.NewEnv("shop")
	env.Deploy("db", "../../db").Units(2) // paths are taken relative to the working directory now
	env.Deploy("web", "..").Units(3)
	env.Relate("web", "db")
	env.Hook("web", charmtest.Func(reconcile))
	t.Chdir(t.TempDir())
	rep := charmtest.Converges(t, env, charmtest.SimOptions{Schedules: 12, Seed: 2, Parallel: 1})
	if got := rep.FixedPoints[0].Settings["web/2 status"]; got != "active: connected to 127.0.0.1:6379 db shop as web" {
		t.Errorf("web/2 status %q", got)
	}
}
