package raftstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// The views an engine controller runs on.
var (
	_ engine.Store    = (*EnvStore)(nil)
	_ engine.InFlight = (*EnvStore)(nil)
)

const testUUID = "5f0c6a1e-2b3d-4e7f-8a9b-0c1d2e3f4a5b"

// deployIn is deployCmd named for, and sent to, environment env.
func deployIn(env string) *model.Command {
	c := deployCmd()
	c.Deploy.Env.Name, c.Env = env, env
	return c
}

// clusterBytes is the JSON of every environment of a store, the default
// one first.
func clusterBytes(t testing.TB, s *Store) string {
	t.Helper()
	var b strings.Builder
	err := s.ViewCluster(func(c *model.Cluster) error {
		fmt.Fprintf(&b, "default %s:", c.DefaultUUID)
		for _, name := range append([]string{""}, c.Names()...) {
			st, err := c.State(name)
			if err != nil {
				return err
			}
			js, err := json.Marshal(st)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "%s=%s\n", name, js)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// fsmEnvs is an fsm holding the default environment and dev, each with a
// unit on one of two machines.
func fsmEnvs(t *testing.T) *applier {
	a := &applier{tb: t, f: newFSM(hclog.NewNullLogger())}
	a.apply(machineCmd("m1", "10.0.0.1"), deployCmd(),
		&model.Command{Op: model.OpEnvAdd, EnvAdd: &model.EnvAdd{Name: "dev", UUID: testUUID, Share: &model.EnvShare{Units: 10}}},
		deployIn("dev"), machineCmd("m2", "10.0.0.2"),
		&model.Command{Op: model.OpTokenCreate, TokenCreate: &model.TokenCreate{Hash: strings.Repeat("7", 64), Env: "dev", Name: "ci", Role: model.RoleReader}})
	return a
}

// TestEnvironmentsSnapshotRoundTrip: a snapshot of several environments
// streams the bytes json.Marshal gives, holds the cluster's fields once,
// and restores to the same environments, which then apply entries alike.
func TestEnvironmentsSnapshotRoundTrip(t *testing.T) {
	a := fsmEnvs(t)
	var buf bytes.Buffer
	if err := a.f.frozen().writeTo(&buf); err != nil {
		t.Fatal(err)
	}
	if want := marshalled(t, a.f); !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("streamed document differs from json.Marshal:\n%s\n%s", buf.Bytes(), want)
	}
	var raw struct {
		Envs map[string]struct {
			UUID  string          `json:"uuid"`
			State json.RawMessage `json:"state"`
		} `json:"environments"`
	}
	if err := json.Unmarshal(buf.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	if dev := raw.Envs["dev"]; dev.UUID != testUUID || !bytes.Contains(dev.State, []byte(`"machines":null`)) {
		t.Fatalf("dev in the document: uuid %q, state %s; want its uuid and no copy of the machines", dev.UUID, dev.State)
	}

	b := &applier{tb: t, f: newFSM(hclog.NewNullLogger()), index: a.index}
	if err := b.f.Restore(io.NopCloser(bytes.NewReader(buf.Bytes()))); err != nil {
		t.Fatal(err)
	}
	same := func(when string) {
		t.Helper()
		for _, name := range []string{"", "dev"} {
			x, _ := a.f.cluster.State(name)
			y, err := b.f.cluster.State(name)
			if err != nil {
				t.Fatalf("%s: %v", when, err)
			}
			jx, _ := json.Marshal(x)
			jy, _ := json.Marshal(y)
			if !bytes.Equal(jx, jy) {
				t.Fatalf("%s: environment %q differs:\n%s\n%s", when, name, jx, jy)
			}
		}
		if d := b.f.cluster.Envs["dev"].State.ClusterFieldsDiffer(b.f.cluster.Default); d != "" {
			t.Fatalf("%s: dev's copy of the cluster's fields differs in %s", when, d)
		}
		if e := b.f.cluster.Envs["dev"]; e.UUID != testUUID || e.Created != 3 || e.Share == nil || e.Share.Units != 10 {
			t.Fatalf("%s: dev restored as %+v", when, e)
		}
		if tok, ok := b.f.cluster.Token(strings.Repeat("7", 64)); !ok || tok.Env != "dev" || tok.Role != model.RoleReader || len(b.f.cluster.Tokens) != 1 {
			t.Fatalf("%s: dev's token restored as %+v", when, b.f.cluster.Tokens)
		}
	}
	same("restored")

	// The same document restored as a backup, through the log, replaces
	// a cluster of one environment with both.
	d, err := decodeDocument(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	data, err := encodeEntry(entryReplace, d)
	if err != nil {
		t.Fatal(err)
	}
	r := &applier{tb: t, f: newFSM(hclog.NewNullLogger())}
	r.apply(machineCmd("m9", "10.0.0.9"))
	r.index++
	if out := r.f.ApplyBatch([]*raft.Log{{Type: raft.LogCommand, Index: r.index, Data: data}}); out[0] != nil {
		if err, ok := out[0].(error); ok {
			t.Fatal(err)
		}
	}
	if e := r.f.cluster.Envs["dev"]; e == nil || e.UUID != testUUID || len(e.State.Units) != 1 || e.State.ClusterFieldsDiffer(r.f.cluster.Default) != "" || r.f.cluster.Default.Machines["m9"] != nil {
		t.Fatalf("after restoring the backup: environments %v, machines %v", r.f.cluster.Names(), sortedNames(r.f.cluster.Default.Machines))
	}

	lost := &model.Command{Op: model.OpLiveness, Liveness: &model.SetLiveness{Lost: map[string]bool{"m1": true}}}
	a.apply(lost, deployIn("dev"))
	b.apply(lost, deployIn("dev"))
	same("after more entries")
}

// TestPreEnvironmentDocumentOpensAsDefault: a document of the shape every
// earlier build writes (one state) opens as the default environment with
// nothing lost, and a cluster of that one environment is written in that
// shape byte for byte, so a v0.3.0 server installs a newer leader's
// snapshot as its own.
func TestPreEnvironmentDocumentOpensAsDefault(t *testing.T) {
	a := &applier{tb: t, f: newFSM(hclog.NewNullLogger())}
	a.apply(machineCmd("m1", "10.0.0.1"), deployCmd())
	st := a.f.cluster.Default
	old, err := json.Marshal(struct {
		Version int                               `json:"version"`
		Index   uint64                            `json:"index"`
		Nodes   map[string]nodeInfo               `json:"nodes"`
		Level   model.Level                       `json:"level,omitempty"`
		State   *model.State                      `json:"state"`
		Logs    *model.BoundedDump[model.LogLine] `json:"logs,omitempty"`
		Events  *model.BoundedDump[model.Event]   `json:"events,omitempty"`
	}{snapshotVersion, a.index, map[string]nodeInfo{}, 0, st, a.f.diag.logs.Dump(), a.f.diag.events.Dump()})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := a.f.frozen().writeTo(&buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), old) {
		t.Fatalf("one environment's snapshot is not the pre-environment document:\n%s\n%s", buf.Bytes(), old)
	}
	d, err := decodeDocument(bytes.NewReader(old))
	if err != nil {
		t.Fatal(err)
	}
	c := d.cluster()
	want, _ := json.Marshal(st)
	got, _ := json.Marshal(c.Default)
	if !bytes.Equal(got, want) || len(c.Envs) != 0 || c.DefaultUUID != "" {
		t.Fatalf("opened as %d other environments, uuid %q, default:\n%s\nwant:\n%s", len(c.Envs), c.DefaultUUID, got, want)
	}
	if st, ok := c.Lookup("test"); !ok || len(st.Units) != 1 {
		t.Fatal("the default environment is not found by its name, test")
	}

	// A backup of that shape restored into a cluster of environments
	// replaces all of them: the backup's cluster is one environment.
	b := fsmEnvs(t)
	data, err := encodeEntry(entryReplace, d)
	if err != nil {
		t.Fatal(err)
	}
	b.index++
	if out := b.f.ApplyBatch([]*raft.Log{{Type: raft.LogCommand, Index: b.index, Data: data}}); out[0] != nil {
		if err, ok := out[0].(error); ok {
			t.Fatal(err)
		}
	}
	if len(b.f.cluster.Envs) != 0 || len(b.f.cluster.Default.Machines) != 1 {
		t.Fatalf("after restoring a one-environment backup: environments %v, machines %d", b.f.cluster.Names(), len(b.f.cluster.Default.Machines))
	}
}

// TestEnvironmentsThroughTheStore: on a node of this build, the default
// environment gets a uuid as the level rises; env-add, a deploy through
// an environment's view and a machine registered once for the cluster
// survive a snapshot and a restart; a name taken is refused before it is
// proposed.
func TestEnvironmentsThroughTheStore(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	n := newNode(t, testLogger(t), "n1")
	n.start(true, nil)
	settled(t, n)
	var defaultUUID string
	_ = n.s.ViewCluster(func(c *model.Cluster) error { defaultUUID = c.DefaultUUID; return nil })
	if model.CheckUUID(defaultUUID) != nil {
		t.Fatalf("the default environment's uuid is %q after the level rose", defaultUUID)
	}
	if _, err := n.s.Apply(ctx, deployCmd()); err != nil {
		t.Fatal(err)
	}
	uuid, err := n.s.AddEnv(ctx, "dev", nil)
	if err != nil {
		t.Fatal(err)
	}
	dev := n.s.Env("dev")
	if _, err := dev.Apply(ctx, deployIn("dev")); err != nil {
		t.Fatal(err)
	}
	if _, err := n.s.Apply(ctx, machineCmd("m1", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	placed := func(v interface {
		View(func(*model.State) error) error
	}) string {
		var m string
		if err := v.View(func(st *model.State) error {
			if u := st.Units["db/0"]; u != nil {
				m = u.Machine
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return m
	}
	if placed(dev) != "m1" || placed(n.s) != "m1" {
		t.Fatalf("db/0 of dev on %q, of the default on %q; want both on m1", placed(dev), placed(n.s))
	}
	before := n.s.LastIndex()
	if _, err := n.s.AddEnv(ctx, "dev", nil); err == nil || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "environment dev exists") {
		t.Fatalf("adding dev again: %v", err)
	}
	if _, err := n.s.Env("nope").Apply(ctx, deployIn("nope")); err == nil || !strings.Contains(err.Error(), `environment "nope" does not exist`) {
		t.Fatalf("a deploy to a missing environment: %v", err)
	}
	if err := n.s.Env("nope").View(func(*model.State) error { return nil }); err == nil {
		t.Fatal("a view of a missing environment read something")
	}
	if _, err := dev.Apply(ctx, deployIn("other")); err == nil || !strings.Contains(err.Error(), "sent through environment") {
		t.Fatalf("a command for another environment through dev's view: %v", err)
	}
	if got := n.s.LastIndex(); got > before+1 {
		// The deploy to a missing environment is judged by the FSM (one
		// refused entry); the others never reach the log.
		t.Fatalf("refusals took %d entries; want at most 1", got-before)
	}

	if err := n.s.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}
	want := clusterBytes(t, n.s)
	n.stop()
	n.start(false, nil)
	rafttest.Eventually(t, time.Minute, "n1 back with its environments", func() error {
		if got := clusterBytes(t, n.s); got != want {
			return fmt.Errorf("after the restart:\n%s\nwant:\n%s", got, want)
		}
		return nil
	})
	_ = n.s.ViewCluster(func(c *model.Cluster) error {
		if c.Envs["dev"].UUID != uuid || c.DefaultUUID != defaultUUID {
			t.Errorf("uuids after the restart: dev %s (was %s), default %s (was %s)", c.Envs["dev"].UUID, uuid, c.DefaultUUID, defaultUUID)
		}
		return nil
	})
	if err := n.s.RemoveEnv(ctx, "dev"); err == nil || !strings.Contains(err.Error(), "still holds 1 units") {
		t.Fatalf("removing dev with its unit: %v", err)
	}
}

// TestPreEnvironmentDataDirOpensAsDefault: a data dir a level-1 build
// wrote (snapshot and log) opens on this build as the default
// environment, nothing lost; environments are refused while the cluster
// is at level 1, and work once this build raises it.
func TestPreEnvironmentDataDirOpensAsDefault(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	n := newNode(t, testLogger(t), "n1")
	n.level = model.LevelBase
	n.start(true, nil)
	settled(t, n)
	if _, err := n.s.Apply(ctx, machineCmd("m1", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	if _, err := n.s.Apply(ctx, deployCmd()); err != nil {
		t.Fatal(err)
	}
	if err := n.s.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := n.s.Apply(ctx, machineCmd("m2", "10.0.0.2")); err != nil {
		t.Fatal(err)
	}
	// Level 1: refused before the log, saying what to do.
	before := n.s.LastIndex()
	_, err := n.s.AddEnv(ctx, "dev", nil)
	if err == nil || !strings.Contains(err.Error(), "node n1 runs feature level 1, this command needs 2: upgrade n1 first") {
		t.Fatalf("env add on a level-1 cluster: %v", err)
	}
	if _, err := n.s.Env("dev").Apply(ctx, deployIn("dev")); err == nil || !strings.Contains(err.Error(), "this command needs 2") {
		t.Fatalf("a deploy naming an environment on a level-1 cluster: %v", err)
	}
	if got := n.s.LastIndex(); got != before {
		t.Fatalf("refusals reached the log: last index %d, was %d", got, before)
	}
	var units, machines []string
	_ = n.s.View(func(st *model.State) error {
		units, machines = st.SortedUnits(), sortedNames(st.Machines)
		return nil
	})
	n.stop()

	n.level = model.BuildLevel
	n.start(false, nil)
	settled(t, n)
	_ = n.s.ViewCluster(func(c *model.Cluster) error {
		st := c.Default
		if got := st.SortedUnits(); strings.Join(got, ",") != strings.Join(units, ",") || st.Name != "test" {
			t.Errorf("default environment %q holds units %v; want test with %v", st.Name, got, units)
		}
		if got := sortedNames(st.Machines); strings.Join(got, ",") != strings.Join(machines, ",") || st.Machines["m2"].ID == "" {
			t.Errorf("machines %v (m2 id %q); want %v, numbered as the level rose", got, st.Machines["m2"].ID, machines)
		}
		if len(c.Envs) != 0 || model.CheckUUID(c.DefaultUUID) != nil {
			t.Errorf("environments %v, default uuid %q", c.Names(), c.DefaultUUID)
		}
		return nil
	})
	if _, err := n.s.AddEnv(ctx, "dev", nil); err != nil {
		t.Fatalf("env add once the level rose: %v", err)
	}
	if _, err := n.s.Env("dev").Apply(ctx, deployIn("dev")); err != nil {
		t.Fatal(err)
	}
}

func sortedNames(m map[string]*model.Machine) []string {
	var out []string
	for name := range m {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// TestNewClusterFromBackupKeepsEnvironments: a backup of several
// environments, staged with replaced credentials (cluster restore
// --new-tokens), starts a new cluster holding every environment, each
// with the new credentials and the machines, and a new node that joins by
// snapshot holds them alike.
func TestNewClusterFromBackupKeepsEnvironments(t *testing.T) {
	log := testLogger(t)
	ctx := ctxT(t, 2*time.Minute)
	old := newNode(t, log, "n1")
	old.start(true, nil)
	settled(t, old)
	if _, err := old.s.AddEnv(ctx, "dev", &model.EnvShare{Units: 5}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*model.Command{deployCmd(), deployIn("dev"), machineCmd("m1", "10.0.0.1")} {
		if _, err := old.s.Apply(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	var backup bytes.Buffer
	if err := old.s.SaveBackup(ctx, &backup); err != nil {
		t.Fatal(err)
	}
	want := clusterBytes(t, old.s)
	old.stop()

	b, err := ReadBackup(bytes.NewReader(backup.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	fresh := &model.Auth{Operator: strings.Repeat("1", 64), Join: strings.Repeat("2", 64)}
	b.State().Auth = fresh
	r1 := newNode(t, log, "r1")
	if err := StageRestore(r1.dir, b, nil); err != nil {
		t.Fatal(err)
	}
	r1.start(true, nil)
	settled(t, r1)
	check := func(n *node) error {
		return n.s.ViewCluster(func(c *model.Cluster) error {
			dev, ok := c.Envs["dev"]
			if !ok {
				return fmt.Errorf("%s holds no dev: %v", n.id, c.Names())
			}
			for _, st := range c.States() {
				if st.Auth == nil || *st.Auth != *fresh {
					return fmt.Errorf("%s: environment %q holds credentials %+v, not the restored ones", n.id, st.Name, st.Auth)
				}
				if u := st.Units["db/0"]; u == nil || u.Machine != "m1" {
					return fmt.Errorf("%s: environment %q's db/0 is %+v", n.id, st.Name, u)
				}
			}
			if dev.Share == nil || dev.Share.Units != 5 {
				return fmt.Errorf("%s: dev's share %+v", n.id, dev.Share)
			}
			return nil
		})
	}
	if err := check(r1); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(want, `"operator":"`+fresh.Operator) {
		t.Fatal("the old cluster already held the new credentials")
	}
	r2 := newNode(t, log, "r2")
	r2.start(false, []string{r1.httpAddr})
	nodes := []*node{r1, r2}
	rafttest.Eventually(t, time.Minute, "the joiner holds every environment", func() error {
		if err := converged(t, nodes...); err != nil {
			return err
		}
		return check(r2)
	})
}
