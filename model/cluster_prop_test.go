package model

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// randomClusterCommand is one command of a random history: machines come
// and go and are lost, environments are added and removed, deploys and
// runs land in any of them, limits change.
func randomClusterCommand(rng *rand.Rand, cl *Cluster, added *int) *Command {
	envs := []string{"", "a", "b", "c"}
	machine := fmt.Sprintf("m%d", rng.Intn(4))
	switch rng.Intn(10) {
	case 8:
		env, name := envs[1+rng.Intn(3)], fmt.Sprintf("t%d", rng.Intn(3))
		if rng.Intn(2) == 0 {
			return &Command{Op: OpTokenRevoke, TokenRevoke: &TokenRevoke{Env: env, Name: name}}
		}
		*added++
		return &Command{Op: OpTokenCreate, TokenCreate: &TokenCreate{Hash: fmt.Sprintf("%064x", *added), Env: env, Name: name, Role: RoleReader}}
	case 0:
		return &Command{Op: OpMachine, Machine: &RegisterMachine{Name: machine, Address: "10.0.0." + machine[1:], Number: rng.Intn(2) == 0}}
	case 1:
		lost := map[string]bool{}
		for name := range cl.Default.Machines {
			lost[name] = rng.Intn(3) == 0
		}
		return &Command{Op: OpLiveness, Liveness: &SetLiveness{Lost: lost}}
	case 2:
		return &Command{Op: OpReset, Reset: &ResetMachine{Name: machine, Forget: rng.Intn(2) == 0}}
	case 3:
		*added++
		return &Command{Op: OpEnvAdd, EnvAdd: &EnvAdd{Name: envs[1+rng.Intn(3)], UUID: fmt.Sprintf("%08x-0000-4000-8000-000000000000", *added)}}
	case 4:
		return &Command{Op: OpEnvRemove, EnvRemove: &EnvRemove{Name: envs[1+rng.Intn(3)]}}
	case 5:
		l := DefaultLimits
		l.Units, l.Environments = 4+rng.Intn(8), 2+rng.Intn(3)
		return &Command{Op: OpLimits, Limits: &l}
	case 6, 7:
		env := envs[rng.Intn(4)]
		name := env
		if env == "" {
			name = "shop"
		}
		return deployTo(env, name, rng.Intn(4))
	}
	// A run of a unit of some environment, its last when it is dying.
	env := envs[rng.Intn(4)]
	st, ok := cl.Lookup(env)
	if !ok || len(st.Units) == 0 {
		return &Command{Op: OpResults, Env: env}
	}
	units := st.SortedUnits()
	u := st.Units[units[rng.Intn(len(units))]]
	return &Command{Op: OpResults, Env: env, Results: []Result{{Unit: u.Name, Hash: fmt.Sprintf("h%d", rng.Intn(1000)), Seen: &Seen{Life: u.Life}}}}
}

// reopen is cl as a snapshot holds it and a reader opens it: the default
// environment whole, the others without their copies of the cluster's
// fields, each through JSON.
func reopen(t *testing.T, cl *Cluster) *Cluster {
	t.Helper()
	decode := func(st *State) *State {
		data, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		var out State
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatal(err)
		}
		return &out
	}
	out := &Cluster{Default: decode(cl.Default), DefaultUUID: cl.DefaultUUID, Envs: map[string]*Env{}}
	if data, err := json.Marshal(cl.Tokens); err != nil || json.Unmarshal(data, &out.Tokens) != nil {
		t.Fatalf("tokens through JSON: %v", err)
	}
	for name, e := range cl.Envs {
		cp := *e
		cp.State = decode(e.State.WithoutCopies())
		out.Envs[name] = &cp
	}
	out.Normalize()
	out.SyncCopies()
	return out
}

// clusterJSON is every environment's state, by name.
func clusterJSON(t *testing.T, cl *Cluster) string {
	t.Helper()
	var b strings.Builder
	for _, name := range append([]string{""}, cl.Names()...) {
		st, _ := cl.Lookup(name)
		fmt.Fprintf(&b, "%s %s\n", name, stateJSON(t, st))
	}
	tokens, _ := json.Marshal(cl.Tokens)
	b.Write(tokens)
	return b.String()
}

// TestClusterRandomHistories: over random histories, every environment's
// copy of the cluster's fields stays the default's, the environments stay
// within the limit, and a cluster reopened from its snapshot midway
// applies the rest of the history exactly as the one that never stopped.
func TestClusterRandomHistories(t *testing.T) {
	// applied counts what the histories did, so that they are known to
	// reach what they are meant to test.
	applied := map[string]int{}
	for seed := int64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewSource(seed))
		live, reopened := NewCluster(), NewCluster()
		added := 0
		for step := 1; step <= 80; step++ {
			c := randomClusterCommand(rng, live, &added)
			data, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			var c1, c2 Command
			_ = json.Unmarshal(data, &c1)
			_ = json.Unmarshal(data, &c2)
			_, err1 := live.Apply(uint64(step), &c1)
			_, err2 := reopened.Apply(uint64(step), &c2)
			if (err1 == nil) != (err2 == nil) {
				t.Fatalf("seed %d step %d %s: live %v, reopened %v", seed, step, c.Op, err1, err2)
			}
			if err1 == nil {
				kind := string(c.Op)
				if c.Env != "" {
					kind += " in an environment"
				}
				applied[kind]++
			}
			for _, name := range live.Names() {
				if d := live.Envs[name].State.ClusterFieldsDiffer(live.Default); d != "" {
					t.Fatalf("seed %d step %d %s: %s's copy differs in %s", seed, step, c.Op, name, d)
				}
			}
			if most := live.Default.LimitsInForce().EnvironmentsInForce(); live.Count() > most && c.Op == OpEnvAdd && err1 == nil {
				t.Fatalf("seed %d step %d: %d environments over a limit of %d", seed, step, live.Count(), most)
			}
			if step == 40 {
				reopened = reopen(t, reopened)
			}
			if a, b := clusterJSON(t, live), clusterJSON(t, reopened); a != b {
				t.Fatalf("seed %d step %d %s: the reopened cluster differs:\n%s\nwant:\n%s", seed, step, c.Op, b, a)
			}
		}
	}
	for _, kind := range []string{"env-add", "env-remove", "deploy in an environment", "results in an environment", "register-machine", "liveness", "reset-machine", "token-create", "token-revoke"} {
		if applied[kind] < 5 {
			t.Errorf("the histories applied %d of %s; the test needs more to mean anything: %v", applied[kind], kind, applied)
		}
	}
}
