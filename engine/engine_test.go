package engine

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// memStore applies commands to a model.State in memory: the same state
// transitions the Raft FSM runs, without the log, for engine unit tests.
type memStore struct {
	mu      sync.RWMutex
	st      *model.State
	changed chan struct{}
	// index is st.Index, readable without mu as raftstore's applied
	// index is (its own lock): the controller reads it, through
	// InFlight, while it holds a View, and a read lock taken again
	// under a waiting Apply deadlocks.
	index atomic.Uint64
	// journal is st's, as the FSM keeps it (Changes); started at the
	// first Apply.
	journal *model.Journal
}

func newMemStore() *memStore { return &memStore{st: model.NewState(), changed: make(chan struct{})} }

func (m *memStore) View(fn func(*model.State) error) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return fn(m.st)
}

func (m *memStore) Apply(_ context.Context, c *model.Command) (*model.Response, error) {
	data, _ := json.Marshal(c)
	var dc model.Command
	_ = json.Unmarshal(data, &dc)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.journal == nil {
		m.journal = model.NewJournal(m.st.Index)
	}
	resp, err := m.st.Apply(m.st.Index+1, &dc)
	if err == nil {
		m.journal.Record(resp.Touched(""))
	}
	m.index.Store(m.st.Index)
	close(m.changed)
	m.changed = make(chan struct{})
	return resp, err
}

func (m *memStore) WaitIndex(ctx context.Context, after uint64) (uint64, bool, error) {
	for {
		m.mu.RLock()
		idx, ch := m.st.Index, m.changed
		m.mu.RUnlock()
		if idx > after {
			return idx, false, nil
		}
		select {
		case <-ctx.Done():
			return idx, false, nil
		case <-ch:
		}
	}
}

func (m *memStore) Index() uint64 { return m.index.Load() }

// Changes is st's journal; called inside View.
func (m *memStore) Changes(since uint64) ([]model.Touched, bool) {
	return m.journal.ChangesSince(since)
}

func intp(n int) *int { return &n }

// shop deploys db (provides kv, peers) and web (requires kv) on one machine.
func shop(t *testing.T, s *memStore, dbUnits, webUnits int) {
	t.Helper()
	charms := map[string]*model.Charm{
		"h-db":  {Hash: "h-db", Meta: model.CharmMeta{Name: "db", Provides: map[string]model.Endpoint{"db": {Interface: "kv"}}, Peers: map[string]model.Endpoint{"cluster": {Interface: "c"}}}},
		"h-web": {Hash: "h-web", Meta: model.CharmMeta{Name: "web", Requires: map[string]model.Endpoint{"db": {Interface: "kv"}}}},
	}
	env := model.Environment{APIVersion: model.APIVersion, Name: "shop",
		Services:  map[string]model.ServiceSpec{"db": {CharmHash: "h-db", Units: intp(dbUnits)}, "web": {CharmHash: "h-web", Units: intp(webUnits)}},
		Relations: map[string][]string{"web-db": {"web:db", "db:db"}}}
	ctx := context.Background()
	if _, err := s.Apply(ctx, &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: "m", Address: "10.0.0.9"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(ctx, &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}}); err != nil {
		t.Fatal(err)
	}
}

func hashOf(s *memStore, unit string) string {
	var h string
	_ = s.View(func(st *model.State) error {
		uni, _ := Build(st, unit)
		h = Hash(uni)
		return nil
	})
	return h
}

func TestOwnWritesDoNotWakeAUnit(t *testing.T) {
	s := newMemStore()
	shop(t, s, 1, 1)
	web, db := hashOf(s, "web/0"), hashOf(s, "db/0")
	_, err := s.Apply(context.Background(), &model.Command{Op: model.OpResults, Results: []model.Result{{
		Unit: "web/0", Hash: web, Seen: &model.Seen{Life: model.Alive},
		Settings: map[int]map[string]string{1: {"database": "shop"}},
		State:    map[string]string{"private": "x"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := hashOf(s, "web/0"); got != web {
		t.Fatal("web/0's own write changed its universe hash")
	}
	if got := hashOf(s, "db/0"); got == db {
		t.Fatal("web/0's write did not change db/0's universe")
	}
}

func TestLeaderAppWritesWakePeersNotTheLeader(t *testing.T) {
	s := newMemStore()
	shop(t, s, 2, 0)
	leader, peer := hashOf(s, "db/0"), hashOf(s, "db/1")
	_, err := s.Apply(context.Background(), &model.Command{Op: model.OpResults, Results: []model.Result{{
		Unit: "db/0", Hash: leader, Leader: true, Seen: &model.Seen{Life: model.Alive},
		App:        map[int]map[string]string{0: {"primary": "db/0"}},
		LeaderData: map[string]string{"epoch": "1"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if hashOf(s, "db/0") != leader {
		t.Fatal("the leader was woken by its own app-bag and leader-data writes")
	}
	if hashOf(s, "db/1") == peer {
		t.Fatal("the peer was not woken by the leader's writes")
	}
}

func TestUniverseShowsOnlyRemoteMembersWithAddress(t *testing.T) {
	s := newMemStore()
	shop(t, s, 2, 1)
	_ = s.View(func(st *model.State) error {
		uni, seen := Build(st, "db/0")
		if len(uni.Relations) != 2 {
			t.Fatalf("relations = %+v", uni.Relations)
		}
		peers := uni.Relation("cluster")
		if _, self := peers.Units["db/0"]; self || peers.Units["db/1"]["private-address"] != "10.0.0.9" {
			t.Fatalf("peer units = %v", peers.Units)
		}
		if uni.Relation("db").Ident != "db:1" || !seen.Relations.Has(1) {
			t.Fatalf("db relation = %+v", uni.Relation("db"))
		}
		return nil
	})
}

// runAll drives a controller to the fixed point with Go reconcile
// functions standing in for the hook processes.
func runAll(t *testing.T, s *memStore, hooks map[string]func(*charmapi.Universe) *charmapi.Result) map[string]int {
	t.Helper()
	ctl := NewController(s, Options{Window: time.Millisecond})
	runs := map[string]int{}
	ctx := context.Background()
	for round := 0; round < 50; round++ {
		work, err := ctl.WaitForWork(ctx, "m", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(work) == 0 {
			return runs
		}
		var reps []wire.Report
		for _, w := range work {
			runs[w.Unit]++
			res := hooks[w.Universe.Service](w.Universe)
			out, _ := json.Marshal(res)
			reps = append(reps, wire.Report{Unit: w.Unit, Hash: w.Hash, Output: out})
		}
		if _, err := ctl.Accept(ctx, "m", reps); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("no fixed point after 50 rounds")
	return nil
}

func TestControllerReachesTheFixedPoint(t *testing.T) {
	s := newMemStore()
	shop(t, s, 2, 3)
	hooks := map[string]func(*charmapi.Universe) *charmapi.Result{
		"db": func(u *charmapi.Universe) *charmapi.Result {
			r := charmapi.NewResult()
			for _, rel := range u.RelationsNamed("db") {
				names := ""
				for unit, s := range rel.Units {
					if s["database"] != "" {
						names += unit + " "
					}
				}
				r.SetLocal(rel.Ident, map[string]string{"allowed": names})
			}
			return r.Active("")
		},
		"web": func(u *charmapi.Universe) *charmapi.Result {
			r := charmapi.NewResult()
			rel := u.Relation("db")
			r.SetLocal(rel.Ident, map[string]string{"database": "shop"})
			return r.Active("")
		},
	}
	runs := runAll(t, s, hooks)
	ctl := NewController(s, Options{})
	st, err := ctl.Status()
	if err != nil {
		t.Fatal(err)
	}
	if !st.Converged {
		t.Fatalf("not converged: %s", st.Summary)
	}
	for unit, n := range runs {
		if n > 3 {
			t.Errorf("%s ran %d times", unit, n)
		}
	}
	// One more round writes nothing: nothing is stale.
	if work, _ := ctl.WaitForWork(context.Background(), "m", 0, 0); len(work) != 0 {
		t.Fatalf("work after the fixed point: %v", work)
	}
}

func TestBadResultsAreUnitErrors(t *testing.T) {
	uni := &charmapi.Universe{Unit: "web/0", Service: "web", Relations: []charmapi.Relation{{Ident: "db:1", ID: 1}}}
	cases := map[string]string{
		`{"relations": `: "not a result object",
		`{"relations": {"nosuch:9": {"local": {}}}}`:       `not in relation "nosuch:9"`,
		`{"relations": {"db:1": {"app": {"a": "b"}}}}`:     "not the leader",
		`{"status": {"state": "happy"}}`:                   `got "happy"`,
		`{"ports": ["http"]}`:                              "is not a port",
		`{"colour": "blue"}`:                               "unknown field",
		`{"leader_data": {"k": "v"}}`:                      "only the leader writes leader data",
		`{"relations": {"db:1": {"local": {"k": "v"}}}} 1`: "more than one JSON value",
	}
	for out, want := range cases {
		_, err := DecodeResult(uni, []byte(out))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", out, err, want)
		}
	}
	res, err := DecodeResult(uni, []byte(`{"relations": {"db:1": {"local": {"k": "v"}}}, "ports": ["80/tcp"]}`))
	if err != nil || res.Settings[1]["k"] != "v" || res.Ports[0] != "80/tcp" {
		t.Fatalf("good result: %+v, %v", res, err)
	}
}
