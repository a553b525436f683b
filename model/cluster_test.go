package model

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

const (
	uuidA = "0f8e2a6c-1b7d-4c3e-9a55-6d2f1e0b9c41"
	uuidB = "7c1d9e04-52a3-4f6b-8e1a-3b9c0d2e7f15"
)

// capply applies c to cl as the log does (a JSON round trip) and fails
// the test on a refusal.
func capply(t *testing.T, cl *Cluster, idx uint64, c *Command) *Response {
	t.Helper()
	resp, err := capplyErr(t, cl, idx, c)
	if err != nil {
		t.Fatalf("apply %s (env %q) at %d: %v", c.Op, c.Env, idx, err)
	}
	return resp
}

func capplyErr(t *testing.T, cl *Cluster, idx uint64, c *Command) (*Response, error) {
	t.Helper()
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var dc Command
	if err := json.Unmarshal(data, &dc); err != nil {
		t.Fatal(err)
	}
	return cl.Apply(idx, &dc)
}

func envAdd(name, uuid string) *Command {
	return &Command{Op: OpEnvAdd, EnvAdd: &EnvAdd{Name: name, UUID: uuid}}
}

// deployTo is a deploy of the fixture environment, named name, to env.
func deployTo(envName, name string, units int) *Command {
	e := env(nil)
	e.Name = name
	e.Services = map[string]ServiceSpec{"db": {Charm: "./db", CharmHash: "h-db", Units: intp(units)}}
	c := deployCmd(e)
	c.Env = envName
	return c
}

// TestClusterKeepsUnitNamesPerEnvironment: two environments each hold a
// db/0 of their own; a deploy to one changes nothing of the other, and a
// machine registered once places units of both.
func TestClusterKeepsUnitNamesPerEnvironment(t *testing.T) {
	cl := NewCluster()
	capply(t, cl, 1, deployTo("", "shop", 2))
	capply(t, cl, 2, envAdd("staging", uuidA))
	capply(t, cl, 3, deployTo("staging", "staging", 1))
	capply(t, cl, 4, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "m1", Address: "10.0.0.1", Number: true}})

	shop, staging := cl.Default, cl.Envs["staging"].State
	if len(shop.Units) != 2 || len(staging.Units) != 1 {
		t.Fatalf("units: default %v, staging %v; want 2 and 1", shop.SortedUnits(), staging.SortedUnits())
	}
	if shop.Units["db/0"] == staging.Units["db/0"] || staging.Units["db/0"] == nil {
		t.Fatal("both environments share one db/0 record")
	}
	for name, st := range map[string]*State{"default": shop, "staging": staging} {
		if u := st.Units["db/0"]; u.Machine != "m1" {
			t.Errorf("%s's db/0 is on machine %q; want m1, the machine registered once for the cluster", name, u.Machine)
		}
		if st.Index != 4 {
			t.Errorf("%s's index is %d; want 4, every environment's index is the log's", name, st.Index)
		}
	}
	if d := staging.ClusterFieldsDiffer(shop); d != "" {
		t.Errorf("staging's copy of the cluster's fields differs in %s", d)
	}
	if staging.Machines["m1"].ID != "0" || shop.NextMachine != 1 {
		t.Errorf("machine id %q, next %d; want one id given once", staging.Machines["m1"].ID, shop.NextMachine)
	}
	// A deploy to staging leaves the default environment's units and
	// operator-change index alone.
	before := shop.EnvIndex
	capply(t, cl, 5, deployTo("staging", "staging", 3))
	if shop.EnvIndex != before || len(shop.Units) != 2 || len(staging.Units) != 3 {
		t.Errorf("after a deploy to staging: default env index %d (was %d), %d units; staging %d units", shop.EnvIndex, before, len(shop.Units), len(staging.Units))
	}
	// The default environment is also reached by its name.
	if st, ok := cl.Lookup("shop"); !ok || st != shop {
		t.Error("the default environment is not found by its name")
	}
}

// TestClusterFanOutKeepsCopiesEqual: every command on the cluster's
// machines, credentials and limits leaves every environment's copy equal
// to the default's, and each environment reacts to it (a lost machine
// marks its own units).
func TestClusterFanOutKeepsCopiesEqual(t *testing.T) {
	cl := NewCluster()
	h := func(c byte) string { return strings.Repeat(string(c), 64) }
	idx := uint64(0)
	next := func() uint64 { idx++; return idx }
	capply(t, cl, next(), &Command{Op: OpAuth, Auth: &Auth{Operator: h('a'), Join: h('b')}})
	capply(t, cl, next(), &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "m1", Address: "10.0.0.1", Credential: h('c'), Number: true}})
	capply(t, cl, next(), envAdd("dev", uuidA))
	capply(t, cl, next(), envAdd("prod", uuidB))
	capply(t, cl, next(), deployTo("dev", "dev", 1))
	capply(t, cl, next(), deployTo("prod", "prod", 2))
	steps := []*Command{
		{Op: OpMachine, Machine: &RegisterMachine{Name: "m2", Address: "10.0.0.2", Number: true}},
		{Op: OpLiveness, Liveness: &SetLiveness{Lost: map[string]bool{"m1": true}}},
		{Op: OpJoin, Join: &JoinToken{Hash: h('d')}},
		{Op: OpLimits, Limits: &Limits{UnitsPerService: 10, Units: 100, Services: 10, Relations: 10, ConfigBytes: 1 << 20, ConfigValueBytes: 1 << 10, ConfigTotalBytes: 1 << 20, Machines: 5, Environments: 4}},
		{Op: OpReset, Reset: &ResetMachine{Name: "m1"}},
		{Op: OpReset, Reset: &ResetMachine{Name: "m2", Forget: true}},
	}
	for _, c := range steps {
		capply(t, cl, next(), c)
		for _, name := range cl.Names() {
			if d := cl.Envs[name].State.ClusterFieldsDiffer(cl.Default); d != "" {
				t.Fatalf("after %s, %s's copy differs in %s", c.Op, name, d)
			}
		}
	}
	if got := cl.Envs["prod"].State.LimitsInForce().Environments; got != 4 {
		t.Errorf("prod's limits say %d environments; want the 4 set for the cluster", got)
	}
	// A machine refused by the default environment is refused for all.
	capply(t, cl, next(), &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "m3", Address: "10.0.0.3", Credential: h('c'), Number: true}})
	if _, err := capplyErr(t, cl, next(), &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "m3", Address: "10.0.0.9", Renew: h('e')}}); err == nil {
		t.Fatal("a takeover of m3 was accepted")
	}
	if got := cl.Envs["dev"].State.Machines["m3"].Address; got != "10.0.0.3" {
		t.Errorf("dev's m3 moved to %s after a refused registration", got)
	}
}

// TestClusterRoutesAndRefuses: commands reach only the environment they
// name; a missing environment, a cluster command naming one, a file
// named for another environment and names out of the rules are refused
// with what to do, changing nothing.
func TestClusterRoutesAndRefuses(t *testing.T) {
	cl := NewCluster()
	capply(t, cl, 1, deployTo("", "shop", 1))
	capply(t, cl, 2, envAdd("dev", uuidA))
	for _, tc := range []struct {
		c    *Command
		want string
	}{
		{deployTo("nope", "nope", 1), "environment \"nope\" does not exist (environments: shop (default), dev); create it with `fixpoint env add nope`"},
		{deployTo("dev", "shop", 1), "names environment \"shop\" but is applied to environment \"dev\""},
		{deployTo("", "dev", 1), "names environment \"dev\", which is not the default environment: apply it to that environment (-e dev)"},
		{&Command{Op: OpLiveness, Env: "dev", Liveness: &SetLiveness{}}, "applies to the whole cluster"},
		{envAdd("dev", uuidB), "environment dev exists (uuid " + uuidA + ")"},
		{envAdd("shop", uuidB), "it is the default environment's name"},
		{envAdd("other", uuidA), "uuid " + uuidA + " is environment dev's"},
		{envAdd("Bad_Name", uuidB), "environment name \"Bad_Name\" is invalid"},
		{envAdd(strings.Repeat("e", 64), uuidB), "is 64 bytes long; the limit is 63"},
		{envAdd("other", "not-a-uuid"), "is not a uuid"},
		{&Command{Op: OpEnvRemove, EnvRemove: &EnvRemove{Name: "shop"}}, "is the default environment, which is never dropped"},
		{&Command{Op: OpEnvRemove, EnvRemove: &EnvRemove{Name: "gone"}}, "environment \"gone\" does not exist"},
	} {
		before := stateJSON(t, cl.Default) + stateJSON(t, cl.Envs["dev"].State)
		_, err := capplyErr(t, cl, 3, tc.c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s (env %q): error %v; want it to say %q", tc.c.Op, tc.c.Env, err, tc.want)
		}
		// Admit refuses it alike, before any proposal, where the
		// command itself is well formed.
		if desired, cerr := tc.c.Check(); cerr == nil {
			if _, aerr := cl.Admit(tc.c, desired); aerr == nil {
				t.Errorf("%s (env %q): Admit accepts what Apply refuses: %v", tc.c.Op, tc.c.Env, err)
			}
		}
		after := stateJSON(t, cl.Default) + stateJSON(t, cl.Envs["dev"].State)
		if before != after {
			t.Errorf("%s refused but changed the state", tc.c.Op)
		}
	}
	if len(cl.Envs) != 1 {
		t.Errorf("environments %v; want dev alone", cl.Names())
	}
}

// TestEnvAddIsIdempotentAndBounded: the same env-add again is a no-op,
// a retried request is a duplicate, and the cluster's limit on
// environments, the default one counted, refuses one more.
func TestEnvAddIsIdempotentAndBounded(t *testing.T) {
	cl := NewCluster()
	l := DefaultLimits
	l.Environments = 3
	capply(t, cl, 1, &Command{Op: OpLimits, Limits: &l})
	add := envAdd("dev", uuidA)
	add.RequestID = "r1"
	capply(t, cl, 2, add)
	if resp := capply(t, cl, 3, add); !resp.Duplicate || resp.Index != 2 {
		t.Errorf("retried env-add: %+v; want a duplicate of index 2", resp)
	}
	if noop, err := cl.Admit(envAdd("dev", uuidA), nil); !noop || err != nil {
		t.Errorf("adding dev as it is: noop %v, %v; want a no-op", noop, err)
	}
	capply(t, cl, 4, envAdd("qa", uuidB))
	_, err := capplyErr(t, cl, 5, envAdd("more", "11111111-2222-4333-8444-555555555555"))
	if err == nil || !strings.Contains(err.Error(), "holds 3 environments, the default one included, its limit") {
		t.Errorf("a fourth environment past a limit of 3: %v", err)
	}
	if cl.Count() != 3 || cl.Envs["qa"].Created != 4 || cl.Envs["dev"].UUID != uuidA {
		t.Errorf("count %d, qa created at %d, dev uuid %s", cl.Count(), cl.Envs["qa"].Created, cl.Envs["dev"].UUID)
	}
}

// TestEnvRemoveNeedsAnEmptyEnvironment: an environment with units is not
// dropped; deployed empty, its units run their last reconcile and go,
// and then it is, its unit numbers and names free for a new one.
func TestEnvRemoveNeedsAnEmptyEnvironment(t *testing.T) {
	cl := NewCluster()
	capply(t, cl, 1, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "m1", Address: "10.0.0.1"}})
	capply(t, cl, 2, envAdd("dev", uuidA))
	capply(t, cl, 3, deployTo("dev", "dev", 1))
	remove := &Command{Op: OpEnvRemove, EnvRemove: &EnvRemove{Name: "dev"}}
	if _, err := capplyErr(t, cl, 4, remove); err == nil || !strings.Contains(err.Error(), "still holds 1 units, 1 services") {
		t.Fatalf("removing dev with a unit: %v", err)
	}
	// db/0 runs once, so that it has hooks to run when it dies.
	capply(t, cl, 4, &Command{Op: OpResults, Env: "dev", Results: []Result{{Unit: "db/0", Hash: "h0", Seen: &Seen{Life: Alive}}}})
	empty := deployTo("dev", "dev", 1)
	empty.Deploy.Env.Services = nil
	capply(t, cl, 5, empty)
	st := cl.Envs["dev"].State
	u := st.Units["db/0"]
	if u == nil || u.Life != Dying {
		t.Fatalf("db/0 after the empty deploy: %+v; want dying", u)
	}
	capply(t, cl, 6, &Command{Op: OpResults, Env: "dev", Results: []Result{{Unit: "db/0", Hash: "h", Seen: &Seen{Life: Dying}}}})
	if len(st.Units) != 0 || len(st.Services) != 0 {
		t.Fatalf("after its last run dev holds units %v, services %v", st.SortedUnits(), sortedKeys(st.Services))
	}
	capply(t, cl, 7, remove)
	if _, ok := cl.Envs["dev"]; ok {
		t.Fatal("dev was not dropped")
	}
	capply(t, cl, 8, envAdd("dev", uuidB))
	if cl.Envs["dev"].UUID != uuidB || len(cl.Envs["dev"].State.Units) != 0 {
		t.Error("a new dev is not a new environment")
	}
}

// TestEnvSharesAndClusterTotals: an environment's share caps its units;
// the cluster's unit limit counts every environment's units; with the
// default environment alone nothing changes.
func TestEnvSharesAndClusterTotals(t *testing.T) {
	cl := NewCluster()
	l := DefaultLimits
	l.Units = 5
	capply(t, cl, 1, &Command{Op: OpLimits, Limits: &l})
	capply(t, cl, 2, deployTo("", "shop", 5)) // the whole limit, alone
	capply(t, cl, 3, &Command{Op: OpEnvAdd, EnvAdd: &EnvAdd{Name: "dev", UUID: uuidA, Share: &EnvShare{Units: 2}}})
	if _, err := capplyErr(t, cl, 4, deployTo("dev", "dev", 3)); err == nil || !strings.Contains(err.Error(), "environment dev's share is 2 units") {
		t.Errorf("3 units in a share of 2: %v", err)
	}
	if _, err := capplyErr(t, cl, 4, deployTo("dev", "dev", 1)); err == nil || !strings.Contains(err.Error(), "the cluster's limit is 5") {
		t.Errorf("a sixth unit in the cluster: %v", err)
	}
	capply(t, cl, 5, deployTo("", "shop", 3))
	capply(t, cl, 6, deployTo("dev", "dev", 2))
	if n := len(cl.Envs["dev"].State.Units); n != 2 {
		t.Errorf("dev holds %d units; want 2", n)
	}
}

// TestClusterStaysDeterministic: two clusters fed the same entries hold
// the same environments, byte for byte.
func TestClusterStaysDeterministic(t *testing.T) {
	run := func() string {
		cl := NewCluster()
		idx := uint64(0)
		for i, name := range []string{"a", "b", "c"} {
			idx++
			capply(t, cl, idx, envAdd(name, fmt.Sprintf("%08x-0000-4000-8000-000000000000", i)))
			idx++
			capply(t, cl, idx, deployTo(name, name, i+1))
		}
		idx++
		capply(t, cl, idx, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "m1", Address: "10.0.0.1", Number: true}})
		var b strings.Builder
		for _, st := range cl.States() {
			b.WriteString(stateJSON(t, st))
		}
		return b.String()
	}
	if a, b := run(), run(); a != b {
		t.Error("the same entries gave two clusters")
	}
}

// TestPerEnvOpsHaveEnvLevelRows: every op that names an environment has
// a level row for the field, so a v0.3.0 node halts rather than apply it
// to its one environment; the ops of the cluster refuse the field.
func TestPerEnvOpsHaveEnvLevelRows(t *testing.T) {
	for op := range perEnv {
		c := &Command{Op: op, Env: "dev"}
		if lvl, ok := c.Level(); !ok || lvl != LevelRecorded {
			t.Errorf("%s with an environment needs level %d; want %d", op, lvl, LevelRecorded)
		}
		if lvl, _ := (&Command{Op: op}).Level(); lvl != LevelBase {
			t.Errorf("%s of the default environment needs level %d; want the base", op, lvl)
		}
	}
	for op := range clusterWide {
		if perEnv[op] {
			t.Errorf("%s is both per environment and the cluster's", op)
		}
	}
	for _, op := range []Op{OpEnvAdd, OpEnvRemove} {
		if lvl, _ := (&Command{Op: op}).Level(); lvl != LevelRecorded {
			t.Errorf("%s needs level %d; want %d", op, lvl, LevelRecorded)
		}
	}
}

// TestEventsNameTheirEnvironment: events of another environment's units
// name it, and the event store keeps them apart from the default
// environment's unit of the same name.
func TestEventsNameTheirEnvironment(t *testing.T) {
	cl := NewCluster()
	store := NewEventStore()
	apply := func(idx uint64, c *Command) {
		t.Helper()
		store.Add(capply(t, cl, idx, c).Events())
	}
	apply(1, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "m1", Address: "10.0.0.1"}})
	apply(2, deployTo("", "shop", 1))
	apply(3, envAdd("dev", uuidA))
	apply(4, deployTo("dev", "dev", 1))
	apply(5, &Command{Op: OpLiveness, Liveness: &SetLiveness{Lost: map[string]bool{"m1": true}}})
	envsOf := func(key string) map[string]int {
		out := map[string]int{}
		evs, _ := store.Read(0, func(k string) bool { return k == key }, nil, 0, false)
		for _, e := range evs {
			out[e.Env]++
		}
		return out
	}
	def, dev := envsOf("db/0"), envsOf("dev/db/0")
	if len(def) != 1 || def[""] == 0 || len(dev) != 1 || dev["dev"] == 0 {
		t.Fatalf("events kept as db/0 by environment: %v; as dev/db/0: %v; want each environment's own", def, dev)
	}
}
