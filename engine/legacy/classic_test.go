package legacy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/events"
)

// The classic charms in testdata are driven here to their fixed point by a
// miniature engine: build each unit's universe, derive its events against
// the universe it last reconciled, run its old hooks, apply the result,
// until no unit's universe moves. They must reach the settings the
// reconcile-hook charms testdata/charms/db and web reach.

type simUnit struct {
	name, svc, addr string
	leader          bool
	dir             string
	key             string             // staleness key of the universe last reconciled
	last            *charmapi.Universe // nil before the first reconcile
	status          *charmapi.Status
}

type simRel struct {
	id  int
	eps map[string]string // service → endpoint
}

type sim struct {
	t          *testing.T
	units      []*simUnit
	charm      map[string]string         // service → charm dir
	config     map[string]map[string]any // service → config
	rels       []simRel
	local      map[string]map[int]map[string]string // unit → relation → own settings
	app        map[int]map[string]map[string]string // relation → service → bag
	leaderData map[string]map[string]string
	runs       int
	shell      func(*Options) // which shell runs the hooks
}

func (s *sim) universe(u *simUnit) *charmapi.Universe {
	uni := &charmapi.Universe{
		API: charmapi.API, Unit: u.name, Service: u.svc, Charm: "classic-" + u.svc, Life: "alive",
		Leader: u.leader, Machine: "m-" + strings.ReplaceAll(u.name, "/", "-"), Address: u.addr,
		Config: maps.Clone(s.config[u.svc]), LeaderData: maps.Clone(s.leaderData[u.svc]), State: map[string]string{},
	}
	for _, r := range s.rels {
		ep, ok := r.eps[u.svc]
		if !ok {
			continue
		}
		remote, role := u.svc, "peer"
		for svc := range r.eps {
			if svc != u.svc {
				remote = svc
				role = map[string]string{"db": "provides", "web": "requires"}[u.svc]
			}
		}
		rel := charmapi.Relation{
			Ident: ep + ":" + strconv.Itoa(r.id), ID: r.id, Name: ep, Role: role, RemoteService: remote, Scope: "global",
			Local:     withAddr(s.local[u.name][r.id], u.addr),
			App:       maps.Clone(s.app[r.id][u.svc]),
			RemoteApp: maps.Clone(s.app[r.id][remote]),
			Units:     map[string]map[string]string{},
		}
		for _, o := range s.units {
			if o.svc == remote && o != u {
				rel.Units[o.name] = withAddr(s.local[o.name][r.id], o.addr)
			}
		}
		uni.Relations = append(uni.Relations, rel)
	}
	return uni
}

func withAddr(m map[string]string, addr string) map[string]string {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]string{}
	}
	out["private-address"] = addr
	return out
}

// staleKey leaves out what the unit wrote itself, as the engine's hash
// does: its own settings, and as leader its service's bags.
func staleKey(u *charmapi.Universe) string {
	c := *u
	c.Relations = nil
	for _, r := range u.Relations {
		r.Local = nil
		if u.Leader {
			r.App = nil
			if r.Role == "peer" {
				r.RemoteApp = nil
			}
		}
		c.Relations = append(c.Relations, r)
	}
	if u.Leader {
		c.LeaderData = nil
	}
	b, _ := json.Marshal(&c)
	return string(b)
}

func (s *sim) reconcile(u *simUnit) {
	s.t.Helper()
	uni := s.universe(u)
	var before *events.Snapshot
	if u.last != nil {
		var err error
		if before, err = events.FromUniverse(u.last); err != nil {
			s.t.Fatal(err)
		}
	}
	after, err := events.FromUniverse(uni)
	if err != nil {
		s.t.Fatal(err)
	}
	uni.Events = events.Derive(before, after)
	opts := Options{CharmDir: s.charm[u.svc], UnitDir: u.dir, ToolsBinary: toolBinary, Status: u.status}
	s.shell(&opts)
	res, _, err := Run(context.Background(), opts, uni)
	if err != nil {
		s.t.Fatalf("%s: %v", u.name, err)
	}
	s.runs++
	for ident, rr := range res.Relations {
		_, num, _ := strings.Cut(ident, ":")
		id, _ := strconv.Atoi(num)
		if rr.Local != nil {
			bag := maps.Clone(rr.Local)
			delete(bag, "private-address")
			if s.local[u.name] == nil {
				s.local[u.name] = map[int]map[string]string{}
			}
			s.local[u.name][id] = bag
		}
		if rr.App != nil {
			if !u.leader {
				s.t.Fatalf("%s wrote an app bag but is not the leader", u.name)
			}
			if s.app[id] == nil {
				s.app[id] = map[string]map[string]string{}
			}
			s.app[id][u.svc] = rr.App
		}
	}
	if res.LeaderData != nil {
		s.leaderData[u.svc] = res.LeaderData
	}
	if res.Status != nil {
		u.status = res.Status
	}
	u.key, u.last = staleKey(uni), uni
}

// settle reconciles stale units until none is left.
func (s *sim) settle() {
	s.t.Helper()
	for round := 0; round < 20; round++ {
		moved := false
		for _, u := range s.units {
			if staleKey(s.universe(u)) != u.key {
				s.reconcile(u)
				moved = true
			}
		}
		if !moved {
			return
		}
	}
	s.t.Fatal("no fixed point after 20 rounds")
}

func TestClassicCharmsReachTheReconcileCharmsSettings(t *testing.T) {
	forEachShell(t, testClassicCharms)
}

func testClassicCharms(t *testing.T, shell func(*Options)) {
	charms, err := filepath.Abs(filepath.Join("..", "..", "testdata", "charms"))
	if err != nil {
		t.Fatal(err)
	}
	s := &sim{
		t:     t,
		shell: shell,
		charm: map[string]string{"db": filepath.Join(charms, "classic-db"), "web": filepath.Join(charms, "classic-web")},
		config: map[string]map[string]any{
			"db":  {"port": 6379.0, "secret": "fixpoint-demo", "max_connections": 100.0},
			"web": {"database": "shop", "port": 8080.0},
		},
		rels: []simRel{
			{id: 1, eps: map[string]string{"db": "cluster"}},
			{id: 2, eps: map[string]string{"web": "cluster"}},
			{id: 3, eps: map[string]string{"db": "db", "web": "db"}},
		},
		local:      map[string]map[int]map[string]string{},
		app:        map[int]map[string]map[string]string{},
		leaderData: map[string]map[string]string{},
	}
	for _, u := range []*simUnit{
		{name: "db/0", svc: "db", addr: "10.0.0.1", leader: true},
		{name: "db/1", svc: "db", addr: "10.0.0.2"},
		{name: "web/0", svc: "web", addr: "10.0.1.1", leader: true},
		{name: "web/1", svc: "web", addr: "10.0.1.2"},
	} {
		u.dir = t.TempDir()
		s.units = append(s.units, u)
	}
	s.settle()

	sum := sha256.Sum256([]byte("fixpoint-demo/web"))
	password := hex.EncodeToString(sum[:])[:16]
	grant := func(host string) map[string]string {
		return map[string]string{"host": host, "port": "6379", "user": "web", "password": password, "database": "shop", "allowed-units": "web/0 web/1"}
	}
	// What testdata/charms/db and web return for this universe.
	want := map[string]map[int]map[string]string{
		"db/0":  {1: {"address": "10.0.0.1"}, 3: grant("10.0.0.1")},
		"db/1":  {1: {"address": "10.0.0.2"}, 3: grant("10.0.0.2")},
		"web/0": {2: {"address": "10.0.1.1", "port": "8080"}, 3: {"database": "shop"}},
		"web/1": {2: {"address": "10.0.1.2", "port": "8080"}, 3: {"database": "shop"}},
	}
	if !reflect.DeepEqual(s.local, want) {
		t.Errorf("unit settings:\ngot  %v\nwant %v", s.local, want)
	}
	if got := s.app[1]["db"]; !reflect.DeepEqual(got, map[string]string{"primary": "db/0"}) {
		t.Errorf("db cluster app bag = %v", got)
	}
	wantStatus := map[string]charmapi.Status{
		"db/0":  {State: "active", Message: "primary, 2 clients"},
		"db/1":  {State: "active", Message: "replica of db/0, 2 clients"},
		"web/0": {State: "active", Message: "connected to 10.0.0.1:6379 db shop as web"},
		"web/1": {State: "active", Message: "connected to 10.0.0.1:6379 db shop as web"},
	}
	for _, u := range s.units {
		if u.status == nil || *u.status != wantStatus[u.name] {
			t.Errorf("%s status = %+v; want %+v", u.name, u.status, wantStatus[u.name])
		}
	}
	for _, u := range s.units[2:] {
		b, err := os.ReadFile(filepath.Join(u.dir, "web.conf"))
		if err != nil {
			t.Fatalf("%s wrote no web.conf: %v", u.name, err)
		}
		wantConf := "# written by the classic-web charm for " + u.name + "; granted by db/0\n" +
			"host=10.0.0.1\nport=6379\ndatabase=shop\nuser=web\npassword=" + password + "\n"
		if string(b) != wantConf {
			t.Errorf("%s web.conf:\n%s\nwant:\n%s", u.name, b, wantConf)
		}
	}
	t.Logf("fixed point after %d reconciles", s.runs)

	// A new client unit joins: every db unit lists it.
	s.units = append(s.units, &simUnit{name: "web/2", svc: "web", addr: "10.0.1.3", dir: t.TempDir()})
	s.settle()
	if got := s.local["db/0"][3]["allowed-units"]; got != "web/0 web/1 web/2" {
		t.Errorf("after web/2 joined, allowed-units = %q", got)
	}

	// The client unit leaves: it is withdrawn from allowed-units (departed).
	s.units = s.units[:len(s.units)-1]
	delete(s.local, "web/2")
	s.settle()
	if got := s.local["db/1"][3]["allowed-units"]; got != "web/0 web/1" {
		t.Errorf("after web/2 left, allowed-units = %q", got)
	}

	// The relation goes: db units withdraw, web units stop and wait.
	s.rels = s.rels[:2]
	s.settle()
	for _, u := range s.units[2:] {
		if *u.status != (charmapi.Status{State: "blocked", Message: "needs a db relation"}) {
			t.Errorf("%s status after the relation went = %+v", u.name, u.status)
		}
		if _, err := os.Stat(filepath.Join(u.dir, "web.conf")); err == nil {
			t.Errorf("%s kept web.conf after losing its database", u.name)
		}
	}
	if got := *s.units[0].status; got != (charmapi.Status{State: "active", Message: "primary, 0 clients"}) {
		t.Errorf("db/0 status after the relation went = %+v", got)
	}
}
