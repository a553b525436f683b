package charmtest

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/events"
)

// UniverseBuilder builds a universe for a unit test. Start with
// NewUniverse, add what the test needs, and call Universe:
//
//	b := charmtest.NewUniverse("db/0").Leader().Config("port", 6379)
//	b.Provides("db", "web").Unit("web/0", "database", "shop")
//	b.Peer("cluster").Unit("db/1", "address", "10.0.0.2")
//	u := b.Universe()
//
// The builder writes only what it is given. The engine also fills in
// private-address in every member's settings; write it where the charm
// reads it, or use Simulate for universes exactly as the engine builds
// them.
type UniverseBuilder struct {
	u      charmapi.Universe
	rels   []*RelationBuilder
	nextID int
}

// NewUniverse starts a universe for unit ("service/N"): alive, not the
// leader, on machine "local" at 127.0.0.1 (as under `fixpoint up`), with
// no config and no relations, first attempt.
func NewUniverse(unit string) *UniverseBuilder {
	return &UniverseBuilder{u: charmapi.Universe{
		API:        charmapi.API,
		Unit:       unit,
		Service:    charmapi.ServiceOf(unit),
		Charm:      "charmtest",
		Life:       "alive",
		Machine:    "local",
		Address:    "127.0.0.1",
		Config:     map[string]any{},
		LeaderData: map[string]string{},
		State:      map[string]string{},
		Events:     []charmapi.Event{},
		Attempt:    1,
	}}
}

// Leader makes the unit its service's leader.
func (b *UniverseBuilder) Leader() *UniverseBuilder { b.u.Leader = true; return b }

// Dying makes this the unit's last reconcile (it should see no relations).
func (b *UniverseBuilder) Dying() *UniverseBuilder { b.u.Life = "dying"; return b }

// Address sets the unit's private address.
func (b *UniverseBuilder) Address(addr string) *UniverseBuilder { b.u.Address = addr; return b }

// Machine sets the unit's machine.
func (b *UniverseBuilder) Machine(m string) *UniverseBuilder { b.u.Machine = m; return b }

// Charm sets the charm hash the universe names.
func (b *UniverseBuilder) Charm(hash string) *UniverseBuilder { b.u.Charm = hash; return b }

// Config sets one config option. Values are passed through JSON, so an
// int reads back as a float64, exactly as a hook process decodes it.
func (b *UniverseBuilder) Config(name string, value any) *UniverseBuilder {
	b.u.Config[name] = value
	return b
}

// ConfigMap sets several config options.
func (b *UniverseBuilder) ConfigMap(cfg map[string]any) *UniverseBuilder {
	for k, v := range cfg {
		b.u.Config[k] = v
	}
	return b
}

// LeaderData sets leader data, as key, value pairs.
func (b *UniverseBuilder) LeaderData(kv ...string) *UniverseBuilder {
	setPairs(b.u.LeaderData, kv)
	return b
}

// State sets the unit's private state from its last result, as key, value
// pairs.
func (b *UniverseBuilder) State(kv ...string) *UniverseBuilder {
	setPairs(b.u.State, kv)
	return b
}

// Events sets the legacy events of this reconcile (see also EventsBetween).
func (b *UniverseBuilder) Events(evs ...charmapi.Event) *UniverseBuilder {
	b.u.Events = append(b.u.Events, evs...)
	return b
}

// Attempt sets how many times this universe has been tried.
func (b *UniverseBuilder) Attempt(n int) *UniverseBuilder { b.u.Attempt = n; return b }

// Provides adds a relation over a provides endpoint to remoteService.
func (b *UniverseBuilder) Provides(endpoint, remoteService string) *RelationBuilder {
	return b.relation(endpoint, "provides", remoteService)
}

// Requires adds a relation over a requires endpoint to remoteService.
func (b *UniverseBuilder) Requires(endpoint, remoteService string) *RelationBuilder {
	return b.relation(endpoint, "requires", remoteService)
}

// Peer adds the relation over a peer endpoint; its members are the unit's
// peers.
func (b *UniverseBuilder) Peer(endpoint string) *RelationBuilder {
	return b.relation(endpoint, "peer", b.u.Service)
}

func (b *UniverseBuilder) relation(endpoint, role, remote string) *RelationBuilder {
	r := &RelationBuilder{b: b, r: charmapi.Relation{
		ID: b.nextID, Name: endpoint, Interface: endpoint, Role: role, Scope: "global", RemoteService: remote,
		Local: map[string]string{}, App: map[string]string{}, RemoteApp: map[string]string{},
		Units: map[string]map[string]string{},
	}}
	b.nextID++
	b.rels = append(b.rels, r)
	return r
}

// Universe returns the universe built so far, as a hook would decode it
// from JSON: relations sorted by id, numbers as float64. Each call returns
// a fresh copy.
func (b *UniverseBuilder) Universe() *charmapi.Universe {
	u := b.u
	u.Relations = []charmapi.Relation{}
	for _, r := range b.rels {
		rel := r.r
		rel.Ident = r.Ident()
		u.Relations = append(u.Relations, rel)
	}
	sort.SliceStable(u.Relations, func(i, j int) bool { return u.Relations[i].ID < u.Relations[j].ID })
	data, err := json.Marshal(&u)
	if err != nil {
		panic(fmt.Sprintf("charmtest: universe of %s cannot be encoded: %v", u.Unit, err))
	}
	var out charmapi.Universe
	if err := json.Unmarshal(data, &out); err != nil {
		panic(fmt.Sprintf("charmtest: universe of %s: %v", u.Unit, err))
	}
	return &out
}

// RelationBuilder fills in one relation of a UniverseBuilder.
type RelationBuilder struct {
	b *UniverseBuilder
	r charmapi.Relation
}

// Universe returns the whole universe the relation belongs to, so that a
// one-relation universe is one expression:
//
//	u := charmtest.NewUniverse("web/0").Requires("db", "db").Unit("db/0", "host", "10.0.0.1").Universe()
func (r *RelationBuilder) Universe() *charmapi.Universe { return r.b.Universe() }

// ID sets the relation id (by default relations are numbered from 0 in
// the order they were added).
func (r *RelationBuilder) ID(id int) *RelationBuilder { r.r.ID = id; return r }

// Ident is the relation's ident, "endpoint:id".
func (r *RelationBuilder) Ident() string { return r.r.Name + ":" + strconv.Itoa(r.r.ID) }

// Interface sets the interface (by default the endpoint name).
func (r *RelationBuilder) Interface(name string) *RelationBuilder { r.r.Interface = name; return r }

// Container makes the relation container-scoped.
func (r *RelationBuilder) Container() *RelationBuilder { r.r.Scope = "container"; return r }

// Unit adds a remote member with its settings as key, value pairs.
// Calling it again for the same unit adds to its settings.
func (r *RelationBuilder) Unit(name string, kv ...string) *RelationBuilder {
	s := r.r.Units[name]
	if s == nil {
		s = map[string]string{}
		r.r.Units[name] = s
	}
	setPairs(s, kv)
	return r
}

// Units adds remote members with no settings.
func (r *RelationBuilder) Units(names ...string) *RelationBuilder {
	for _, n := range names {
		r.Unit(n)
	}
	return r
}

// Local sets this unit's own settings (what it wrote last time).
func (r *RelationBuilder) Local(kv ...string) *RelationBuilder { setPairs(r.r.Local, kv); return r }

// App sets this unit's service's application bag.
func (r *RelationBuilder) App(kv ...string) *RelationBuilder { setPairs(r.r.App, kv); return r }

// RemoteApp sets the remote service's application bag.
func (r *RelationBuilder) RemoteApp(kv ...string) *RelationBuilder {
	setPairs(r.r.RemoteApp, kv)
	return r
}

func setPairs(m map[string]string, kv []string) {
	if len(kv)%2 != 0 {
		panic(fmt.Sprintf("charmtest: settings come as key, value pairs; got an odd number: %q", kv))
	}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
}

// ParseUniverse decodes a universe from JSON (as `fixpoint debug universe`
// prints it); errors carry line:col.
func ParseUniverse(data []byte) (*charmapi.Universe, error) {
	u, err := events.ParseUniverse(data)
	if err != nil {
		return nil, err
	}
	normalize(u)
	return u, nil
}

// LoadUniverse reads a universe fixture from a JSON file, failing the test
// with the file's line:col when it is malformed.
func LoadUniverse(t testing.TB, path string) *charmapi.Universe {
	t.Helper()
	u, err := events.ReadUniverse(path)
	if err != nil {
		t.Fatal(err)
	}
	normalize(u)
	return u
}

// normalize fills what a fixture may leave out, so hooks can rely on it.
func normalize(u *charmapi.Universe) {
	if u.API == "" {
		u.API = charmapi.API
	}
	if u.Service == "" {
		u.Service = charmapi.ServiceOf(u.Unit)
	}
	if u.Life == "" {
		u.Life = "alive"
	}
	if u.Attempt == 0 {
		u.Attempt = 1
	}
	if u.Config == nil {
		u.Config = map[string]any{}
	}
	if u.LeaderData == nil {
		u.LeaderData = map[string]string{}
	}
	if u.State == nil {
		u.State = map[string]string{}
	}
	if u.Relations == nil {
		u.Relations = []charmapi.Relation{}
	}
	if u.Events == nil {
		u.Events = []charmapi.Event{}
	}
	for i := range u.Relations {
		r := &u.Relations[i]
		if r.Ident == "" {
			r.Ident = r.Name + ":" + strconv.Itoa(r.ID)
		}
		for _, m := range []*map[string]string{&r.Local, &r.App, &r.RemoteApp} {
			if *m == nil {
				*m = map[string]string{}
			}
		}
		if r.Units == nil {
			r.Units = map[string]map[string]string{}
		}
	}
}

// EventsBetween returns the legacy events an old-hook charm would get
// going from universe before to universe after, in Juju's order: what the
// engine puts in Universe.Events. A nil before is the unit's first
// reconcile (install, leader-elected, config-changed, start, then every
// relation joined). Here changes are found by comparing settings, where
// the engine compares revisions; the events are the same.
func EventsBetween(before, after *charmapi.Universe) ([]charmapi.Event, error) {
	a, err := events.FromUniverse(after)
	if err != nil {
		return nil, err
	}
	var b *events.Snapshot
	if before == nil {
		b = &events.Snapshot{Unit: after.Unit}
	} else if b, err = events.FromUniverse(before); err != nil {
		return nil, err
	}
	evs := events.Derive(b, a)
	if evs == nil {
		evs = []charmapi.Event{}
	}
	return evs, nil
}
