package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"testing"
	"time"
	"weak"

	"github.com/fixpoint/fixpoint/engine/unijson"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// membersEnv is db (provides kv, peers) and web (requires kv, peers) with
// up to a dozen units each, so that names in byte order ("db/10" before
// "db/2") and by number differ, and a subordinate log on web's units
// (container scope).
func membersEnv(db, web, n int) (model.Environment, map[string]*model.Charm) {
	charms := map[string]*model.Charm{
		"h-db":  {Hash: "h-db", Meta: model.CharmMeta{Name: "db", Provides: map[string]model.Endpoint{"db": {Interface: "kv"}}, Peers: map[string]model.Endpoint{"cluster": {Interface: "c"}}, Options: map[string]model.Option{"n": {Type: "int", Default: float64(0)}}}},
		"h-web": {Hash: "h-web", Meta: model.CharmMeta{Name: "web", Requires: map[string]model.Endpoint{"db": {Interface: "kv"}}, Peers: map[string]model.Endpoint{"cluster": {Interface: "w"}}}},
		"h-log": {Hash: "h-log", Meta: model.CharmMeta{Name: "log", Subordinate: true,
			Requires: map[string]model.Endpoint{"host": {Interface: "juju-info", Scope: model.Container}}}},
	}
	env := model.Environment{APIVersion: model.APIVersion, Name: "members",
		Services: map[string]model.ServiceSpec{
			"db":  {CharmHash: "h-db", Units: intp(db), Config: map[string]any{"n": n}},
			"web": {CharmHash: "h-web", Units: intp(web)},
			"log": {CharmHash: "h-log"},
		},
		Relations: map[string][]string{"web-db": {"web:db", "db:db"}, "web-log": {"web:juju-info", "log:host"}}}
	return env, charms
}

// TestSharedMembersBuildWhatAFreshStateBuilds changes a state at random
// (relation settings written, cleared, with and without their own
// private-address; machines moving to new addresses; services scaled up
// and down; config changed) and after every change builds every unit's
// universe on the live state, whose members are kept from one change to
// the next (memberCache), on several goroutines at once, and compares it
// with the universe built from a copy of the state that keeps nothing:
// the same universe, the same Seen record, and the same hash, which must
// also be the hash of sorting and encoding the universe's own maps
// (hashCounted), so that no unit reruns after an upgrade; and encoded
// with the members' kept encodings (appendUnits), the bytes
// encoding/json writes.
func TestSharedMembersBuildWhatAFreshStateBuilds(t *testing.T) {
	seeds, steps := 6, 40
	if testing.Short() {
		seeds = 3
	}
	ctx := context.Background()
	machines := []string{"m", "n", "o"}
	var compared int
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(uint64(seed), 16))
		s := newMemStore()
		apply := func(c *model.Command) {
			t.Helper()
			if _, err := s.Apply(ctx, c); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
		}
		for _, m := range machines {
			apply(&model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: m, Address: "10.0.0." + m}})
		}
		db, web, n := 12, 11, 0
		deploy := func() {
			env, charms := membersEnv(db, web, n)
			apply(&model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}})
		}
		deploy()
		for step := range steps {
			switch rng.IntN(8) {
			case 0:
				db, web = 1+rng.IntN(12), 1+rng.IntN(12)
				deploy()
			case 1:
				n++
				deploy()
			case 2:
				m := machines[rng.IntN(len(machines))]
				apply(&model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: m, Address: fmt.Sprintf("10.1.%d.%s", step, m)}})
			default:
				apply(&model.Command{Op: model.OpResults, Results: randomResults(s, rng)})
			}
			if rng.IntN(4) == 0 {
				// Members and views are held weakly: the ones
				// collected are made again.
				runtime.GC()
			}
			compared += compareWithFresh(t, s, fmt.Sprintf("seed %d step %d", seed, step))
		}
	}
	if compared == 0 {
		t.Fatal("no universe compared")
	}
	t.Logf("%d universes compared", compared)
}

// randomResults writes random settings for a few units, each in every
// relation it is in: some keys, none, or its own private-address.
func randomResults(s *memStore, rng *rand.Rand) []model.Result {
	var out []model.Result
	_ = s.View(func(st *model.State) error {
		names := st.SortedUnits()
		for range 1 + rng.IntN(4) {
			name := names[rng.IntN(len(names))]
			u := st.Units[name]
			uni, _ := Build(st, name)
			res := model.Result{Unit: name, Hash: Hash(uni), Seen: &model.Seen{Life: model.Alive}, Settings: map[int]map[string]string{}}
			for _, r := range st.RelationsOf(u.Service) {
				data := map[string]string{}
				switch rng.IntN(4) {
				case 0: // cleared
				case 1:
					data["private-address"] = fmt.Sprintf("192.168.0.%d", rng.IntN(3))
				default:
					for k := range 1 + rng.IntN(3) {
						data[fmt.Sprintf("k%d", k)] = fmt.Sprint(rng.IntN(3))
					}
					if rng.IntN(3) == 0 {
						// What JSON escapes, as encoding/json escapes it.
						data["<k&\u2028>"] = "\"v\"\n\xff"
					}
				}
				res.Settings[r.ID] = data
			}
			out = append(out, res)
		}
		return nil
	})
	return out
}

// compareWithFresh builds every unit of s both ways and fails on any
// difference; it returns how many it compared.
func compareWithFresh(t *testing.T, s *memStore, at string) int {
	t.Helper()
	var compared int
	_ = s.View(func(st *model.State) error {
		fresh := st.Clone() // no lookups, so no memo: everything made anew
		names := st.SortedUnits()
		type built struct {
			uni, seen, enc []byte
			hash           string
			n              int
		}
		live := make([]built, len(names))
		shared := newBuildCache()
		var wg sync.WaitGroup
		for w := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < len(names); i += 3 {
					uni, seen, members := build(st, names[i], shared)
					h, n := hashWith(uni, members)
					enc, err := unijson.Append(nil, uni, appendUnits(members))
					if err != nil {
						t.Error(err)
					}
					live[i] = built{mustJSON(t, uni), mustJSON(t, seen), enc, h, n}
				}
			}()
		}
		wg.Wait()
		for i, name := range names {
			uni, seen := Build(fresh, name)
			for _, r := range uni.Relations {
				// The member set is made apart from the map: it must
				// name the map's members.
				if want := model.NewMembers(slices.Collect(maps.Keys(r.Units))); seen.Relations.Get(r.ID).Members != want {
					t.Fatalf("%s: %s's Seen names %s in relation %d; its universe shows %s", at, name, seen.Relations.Get(r.ID).Members, r.ID, want)
				}
			}
			h, n := hashCounted(uni)
			want := built{mustJSON(t, uni), mustJSON(t, seen), mustJSON(t, uni), h, n}
			if got := live[i]; !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: %s built from the kept members differs from a fresh build:\nuniverse %s\nwant     %s\nencoded  %s\nseen %s\nwant %s\nhash %s (%d bytes), want %s (%d bytes)",
					at, name, got.uni, want.uni, got.enc, got.seen, want.seen, got.hash, got.n, want.hash, want.n)
			}
			compared++
		}
		return nil
	})
	return compared
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestUniverseMapsAreNotWritten drives controllers to their fixed points
// under random schedules - hand-outs, runs, results, events, departed
// members, releases - and then checks that every member kept for the
// universes, and every view of them, still holds what it was made from:
// the maps a universe shares with every other universe of its state are
// read-only, and a writer anywhere on the way from Build to a result
// would show here as a member whose data is not its bag's with its
// address, or a view whose map is not its members'.
func TestUniverseMapsAreNotWritten(t *testing.T) {
	// Members and views are held weakly: with the collector off, every
	// one made is still there to be checked.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var checked int
	for seed := range 4 {
		s := newMemStore()
		generated(t, s, 3, 4)
		driveRandom(t, s, rand.New(rand.NewPCG(uint64(seed), 9)))
		_ = s.View(func(st *model.State) error {
			c := membersOf(st)
			c.mu.Lock()
			defer c.mu.Unlock()
			for k, sd := range c.sides {
				for i := range sd.slots {
					m := load(&sd.slots[i])
					if m == nil {
						continue
					}
					want := newMember(m.name, m.bag, m.addr)
					if !maps.Equal(m.data, want.data) {
						t.Fatalf("seed %d: relation %d member %s holds %v, made from %v: a universe's reader wrote into it", seed, k.rel, m.name, m.data, want.data)
					}
					checked++
				}
				if v := load(&sd.shared); v != nil {
					want := newShownSide(v.byName, nil)
					if !maps.EqualFunc(v.units, want.units, func(a, b map[string]string) bool { return maps.Equal(a, b) }) || v.members != want.members || v.at != want.at {
						t.Fatalf("seed %d: relation %d: a view shows %v, made from %v: a universe's reader wrote into it", seed, k.rel, v.units, want.units)
					}
					checked++
				}
			}
			return nil
		})
	}
	if checked == 0 {
		t.Fatal("no member was kept")
	}
}

// TestAPassFindsEachSideOnce builds every universe of a state with one
// pass, as a hand-out builds a change's universes ahead: each relation
// side's members are found once, not once per universe that shows them
// (a 100-unit peer service's 100 universes each walked all 100 units).
func TestAPassFindsEachSideOnce(t *testing.T) {
	ctx := context.Background()
	s := newMemStore()
	for _, m := range []string{"m", "n"} {
		if _, err := s.Apply(ctx, &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: m, Address: "10.0.0." + m}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, size := range []int{10, 100} {
		env, charms := membersEnv(size, size, 0)
		if _, err := s.Apply(ctx, &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}}); err != nil {
			t.Fatal(err)
		}
		_ = s.View(func(st *model.State) error {
			p := newBuildCache()
			for _, name := range st.SortedUnits() {
				build(st, name, p)
			}
			// db's and web's sides of web-db, each service's peers,
			// web's and log's sides of web-log.
			if len(p.joined) != 6 || p.walks != 6 {
				t.Errorf("%d units per service: one pass found %d sides' members in %d walks, want 6 in 6", size, len(p.joined), p.walks)
			}
			return nil
		})
	}
}

// Each state has its own memberCache, kept while the state lives: a clone
// starts with its own, and a collected state's cache goes with it.
func TestMemberCacheLivesWithItsState(t *testing.T) {
	s := newMemStore()
	shop(t, s, 2, 2)
	var st *model.State
	_ = s.View(func(v *model.State) error { st = v.Clone(); return nil })
	c := membersOf(st)
	if membersOf(st) != c {
		t.Fatal("a state's cache is made again on the second ask")
	}
	if uni, _ := Build(st, "web/0"); uni == nil || len(uni.Relations) == 0 {
		t.Fatalf("web/0 sees %+v, want its relation to db", uni)
	}
	if len(c.sides) == 0 {
		t.Fatal("a universe built from the state left no side in its cache")
	}
	clone := st.Clone()
	if membersOf(clone) == c {
		t.Fatal("a clone shares its original's cache")
	}
	k := weak.Make(clone)
	rafttest.Until(t, time.Minute, "the cache of a collected state goes", func() bool {
		runtime.GC()
		_, ok := memberCaches.Load(k)
		return !ok
	})
	if _, ok := memberCaches.Load(weak.Make(st)); !ok {
		t.Fatal("the cache of a live state went")
	}
	runtime.KeepAlive(st)
}
