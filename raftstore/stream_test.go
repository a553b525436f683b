package raftstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/model"
)

// applier feeds commands to an fsm as raft would.
type applier struct {
	tb    testing.TB
	f     *fsm
	index uint64
}

func (a *applier) apply(cmds ...*model.Command) {
	a.tb.Helper()
	logs := make([]*raft.Log, len(cmds))
	for i, c := range cmds {
		data, err := encodeEntry(entryCommand, c)
		if err != nil {
			a.tb.Fatal(err)
		}
		a.index++
		logs[i] = &raft.Log{Type: raft.LogCommand, Index: a.index, Data: data}
	}
	for i, out := range a.f.ApplyBatch(logs) {
		if err, ok := out.(error); ok {
			a.tb.Fatalf("entry %d (%s): %v", logs[i].Index, cmds[i].Op, err)
		}
	}
}

// streamEnv deploys n pairs of k-unit services with peers and a relation
// between each pair, on one machine.
func streamEnv(a *applier, n, k int) {
	a.apply(machineCmd("m", "10.0.0.1"), envCmd(n, k, k))
}

// envCmd is the deploy of n pairs of k-unit services, the first db with
// k0 units.
func envCmd(n, k, k0 int) *model.Command {
	charms := map[string]*model.Charm{
		"h-db":  {Hash: "h-db", Meta: model.CharmMeta{Name: "db", Provides: map[string]model.Endpoint{"db": {Interface: "kv"}}, Peers: map[string]model.Endpoint{"cluster": {Interface: "c"}}}},
		"h-web": {Hash: "h-web", Meta: model.CharmMeta{Name: "web", Requires: map[string]model.Endpoint{"db": {Interface: "kv"}}, Peers: map[string]model.Endpoint{"cluster": {Interface: "w"}}}},
	}
	env := model.Environment{APIVersion: model.APIVersion, Name: "big", Services: map[string]model.ServiceSpec{}, Relations: map[string][]string{}}
	for i := 0; i < n; i++ {
		db, web := fmt.Sprintf("db%d", i), fmt.Sprintf("web%d", i)
		units := k
		if i == 0 {
			units = k0
		}
		env.Services[db] = model.ServiceSpec{CharmHash: "h-db", Units: &units}
		env.Services[web] = model.ServiceSpec{CharmHash: "h-web", Units: &k}
		env.Relations[fmt.Sprintf("r%d", i)] = []string{web + ":db", db + ":db"}
	}
	return &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}}
}

// streamResults reports a run of every unit, writing round into its
// settings (and its app bag for a leader), with the Seen the engine
// records, 64 results an entry.
func streamResults(a *applier, round int) {
	var names []string
	names = append(names, a.f.cluster.Default.SortedUnits()...)
	for len(names) > 0 {
		batch := names[:min(64, len(names))]
		names = names[len(batch):]
		cmd := &model.Command{Op: model.OpResults}
		for _, name := range batch {
			u := a.f.cluster.Default.Units[name]
			uni, seen := engine.Build(a.f.cluster.Default, name)
			res := model.Result{Unit: name, Hash: engine.Hash(uni), Seen: seen, Output: fmt.Sprint(round),
				Settings: map[int]map[string]string{}, Churn: []string{"k"}}
			for _, r := range uni.Relations {
				res.Settings[r.ID] = map[string]string{"host": name, "round": fmt.Sprint(round)}
				if uni.Leader {
					if res.App == nil {
						res.App = map[int]map[string]string{}
					}
					res.App[r.ID] = map[string]string{"round": fmt.Sprint(round)}
				}
			}
			if uni.Leader {
				res.Leader, res.LeaderData = true, map[string]string{"round": fmt.Sprint(round)}
			}
			if u.Life == model.Alive && round%3 == 2 && u.Number()%7 == 0 {
				res = model.Result{Unit: name, Hash: res.Hash, Seen: seen, Error: "boom"}
			}
			cmd.Results = append(cmd.Results, res)
		}
		a.apply(cmd)
	}
}

// marshalled is the document as json.Marshal encodes it.
func marshalled(t testing.TB, f *fsm) []byte {
	t.Helper()
	f.mu.RLock()
	defer f.mu.RUnlock()
	d := document{Version: snapshotVersion, Index: f.appliedIndex(), Nodes: f.nodes, State: f.cluster.Default,
		DefaultUUID: f.cluster.DefaultUUID, Tokens: f.cluster.Tokens, Logs: f.diag.logs.Dump(), Events: f.diag.events.Dump()}
	for name, e := range f.cluster.Envs {
		if d.Envs == nil {
			d.Envs = map[string]*model.Env{}
		}
		cp := *e
		cp.State = e.State.WithoutCopies()
		d.Envs[name] = &cp
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// memSink is a raft.SnapshotSink in memory.
type memSink struct {
	bytes.Buffer
	closed, cancelled bool
}

func (s *memSink) ID() string    { return "mem" }
func (s *memSink) Cancel() error { s.cancelled = true; return nil }
func (s *memSink) Close() error  { s.closed = true; return nil }

// TestStreamedDocumentIsJSONMarshal: a streamed snapshot has the bytes
// json.Marshal gave the same document, and reads back to the same state.
func TestStreamedDocumentIsJSONMarshal(t *testing.T) {
	a := &applier{tb: t, f: newFSM(testLogger(t))}
	streamEnv(a, 2, 5)
	streamResults(a, 1)
	streamResults(a, 2)
	a.f.nodes["n1"] = nodeInfo{ID: "n1", RaftAddr: "127.0.0.1:1", HTTPAddr: "127.0.0.1:2"}
	want := marshalled(t, a.f)
	snap, err := a.f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var sink memSink
	if err := snap.Persist(&sink); err != nil {
		t.Fatal(err)
	}
	snap.Release()
	if !bytes.Equal(sink.Bytes(), want) {
		t.Fatalf("streamed snapshot differs from json.Marshal:\n got %.300s\nwant %.300s", sink.Bytes(), want)
	}
	g := newFSM(testLogger(t))
	if err := g.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
		t.Fatal(err)
	}
	if got := marshalled(t, g); !bytes.Equal(got, want) {
		t.Fatalf("restored state differs:\n got %.300s\nwant %.300s", got, want)
	}
}

// TestSnapshotPersistsWhileApplying persists a snapshot while entries keep
// applying (run with -race): what is written is the state at the
// snapshot's index, to the byte.
func TestSnapshotPersistsWhileApplying(t *testing.T) {
	a := &applier{tb: t, f: newFSM(testLogger(t))}
	streamEnv(a, 2, 6)
	streamResults(a, 1)
	want := marshalled(t, a.f)
	snap, err := a.f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for round := 2; round < 6; round++ {
			streamResults(a, round)
		}
		a.apply(envCmd(2, 6, 3))
		streamResults(a, 7)
	}()
	var sink memSink
	if err := snap.Persist(&sink); err != nil {
		t.Error(err)
	}
	wg.Wait()
	if !sink.closed || sink.cancelled {
		t.Errorf("sink closed %v, cancelled %v", sink.closed, sink.cancelled)
	}
	if !bytes.Equal(sink.Bytes(), want) {
		t.Fatalf("snapshot persisted during applies is not the state at its index:\n got %.300s\nwant %.300s", sink.Bytes(), want)
	}
	if bytes.Equal(marshalled(t, a.f), want) {
		t.Fatal("the applies changed nothing; the test tests nothing")
	}
}

// TestRestoreSnapshotWithOldSeen restores a snapshot whose units' Seen
// records were written before they were compacted (engine's fixture, from
// 819697c): the state loads, and each Seen lists its members.
func TestRestoreSnapshotWithOldSeen(t *testing.T) {
	raw, err := os.ReadFile("../engine/testdata/seen-v1-state.json")
	if err != nil {
		t.Fatal(err)
	}
	doc := []byte(`{"version":1,"index":40,"nodes":{},"state":` + string(raw) + `}`)
	f := newFSM(testLogger(t))
	if err := f.Restore(io.NopCloser(bytes.NewReader(doc))); err != nil {
		t.Fatal(err)
	}
	u := f.cluster.Default.Units["web0/0"]
	if u == nil || u.Seen == nil {
		t.Fatalf("web0/0 = %+v", u)
	}
	total := 0
	for _, sr := range u.Seen.Relations.All() {
		total += sr.Members.Len()
		if sr.Members.Len() > 0 && sr.At == 0 {
			t.Errorf("relation %s: no revision mark", sr)
		}
	}
	// web0/0 saw its 3 peers and db0's 4 units.
	if total != 7 {
		t.Errorf("web0/0 saw %d members; want 7 (%v)", total, u.Seen.Relations)
	}
}
