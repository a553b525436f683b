package events

import (
	"strconv"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// snap is a test builder: an installed, alive, non-leader unit web/0.
func snap() *Snapshot {
	return &Snapshot{Unit: "web/0", Installed: true, Life: Alive, Charm: "c1", Config: "1", LeaderData: "1", Relations: map[string]*RelSnap{}}
}

// with returns a copy of s with the relation (endpoint, id, remote app)
// holding the given members ("unit=token" pairs).
func (s *Snapshot) with(endpoint string, id int, remote string, members ...string) *Snapshot {
	c := s.clone()
	r := &RelSnap{ID: id, Endpoint: endpoint, RemoteApp: remote, Alive: true, Members: map[string]string{}, Peer: remote == "web"}
	for _, m := range members {
		u, tok, _ := strings.Cut(m, "=")
		r.Members[u] = tok
	}
	c.Relations[r.Ident()] = r
	return c
}

// set applies fn to a copy of s.
func (s *Snapshot) set(fn func(*Snapshot)) *Snapshot {
	c := s.clone()
	fn(c)
	return c
}

func (s *Snapshot) clone() *Snapshot {
	c := *s
	c.Relations = map[string]*RelSnap{}
	for k, r := range s.Relations {
		rc := *r
		rc.Members = map[string]string{}
		for u, t := range r.Members {
			rc.Members[u] = t
		}
		c.Relations[k] = &rc
	}
	return &c
}

func lines(evs []charmapi.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.String()
	}
	return out
}

func TestDerive(t *testing.T) {
	base := snap()
	withDB := base.with("db", 3, "db", "db/0=1", "db/1=1")
	tests := []struct {
		name          string
		before, after *Snapshot
		want          []string
	}{
		{
			name:   "first run of a follower with no relations",
			before: nil,
			after:  base,
			want:   []string{"install", "leader-settings-changed", "config-changed", "start"},
		},
		{
			name:   "the machine rebooted: stop, then start, before what else moved",
			before: withDB,
			after:  withDB.set(func(s *Snapshot) { s.Boot, s.Config = 1, "2" }),
			want:   []string{"stop", "start", "config-changed"},
		},
		{
			name:   "a reboot before the first run is part of it",
			before: nil,
			after:  base.set(func(s *Snapshot) { s.Boot = 3 }),
			want:   []string{"install", "leader-settings-changed", "config-changed", "start"},
		},
		{
			name:   "first run of a leader: leader-elected before config-changed",
			before: nil,
			after:  base.set(func(s *Snapshot) { s.Leader = true }),
			want:   []string{"install", "leader-elected", "config-changed", "start"},
		},
		{
			name:   "first run with relations: created during setup, members joined after start",
			before: nil,
			after:  base.with("db", 3, "db", "db/1=1", "db/0=1").with("cluster", 1, "web", "web/1=4"),
			want: []string{
				"install",
				"cluster-relation-created cluster:1",
				"db-relation-created db:3",
				"leader-settings-changed", "config-changed", "start",
				"cluster-relation-joined cluster:1 web/1", "cluster-relation-changed cluster:1 web/1",
				"db-relation-joined db:3 db/0", "db-relation-changed db:3 db/0",
				"db-relation-joined db:3 db/1", "db-relation-changed db:3 db/1",
			},
		},
		{
			name:   "first run: the snapshot handed as never installed counts as before = nil",
			before: base.set(func(s *Snapshot) { s.Installed = false }),
			after:  base,
			want:   []string{"install", "leader-settings-changed", "config-changed", "start"},
		},
		{
			name:   "nothing moved: nothing to run",
			before: withDB,
			after:  withDB.clone(),
			want:   nil,
		},
		{
			name:   "ten config edits while busy coalesce to one config-changed",
			before: base,
			after:  base.set(func(s *Snapshot) { s.Config = "11" }),
			want:   []string{"config-changed"},
		},
		{
			name:   "charm changed: upgrade-charm then config-changed, once even if config moved too",
			before: base,
			after:  base.set(func(s *Snapshot) { s.Charm = "c2"; s.Config = "2" }),
			want:   []string{"upgrade-charm", "config-changed"},
		},
		{
			name:   "a resource changed: upgrade-charm then config-changed, as Juju's uniter",
			before: base.set(func(s *Snapshot) { s.Resources = "r1" }),
			after:  base.set(func(s *Snapshot) { s.Resources = "r2" }),
			want:   []string{"upgrade-charm", "config-changed"},
		},
		{
			name:   "leadership gained",
			before: base,
			after:  base.set(func(s *Snapshot) { s.Leader = true }),
			want:   []string{"leader-elected"},
		},
		{
			name:   "leader data moved while leader: no hook (own writes wake nobody)",
			before: base.set(func(s *Snapshot) { s.Leader = true }),
			after:  base.set(func(s *Snapshot) { s.Leader = true; s.LeaderData = "2" }),
			want:   nil,
		},
		{
			name:   "leader data moved on a follower",
			before: base,
			after:  base.set(func(s *Snapshot) { s.LeaderData = "2" }),
			want:   []string{"leader-settings-changed"},
		},
		{
			name:   "leadership lost: the new follower hears about leader settings",
			before: base.set(func(s *Snapshot) { s.Leader = true }),
			after:  base,
			want:   []string{"leader-settings-changed"},
		},
		{
			name:   "order: created, leadership, upgrade, config, relations",
			before: withDB,
			after: withDB.set(func(s *Snapshot) { s.Leader = true; s.Charm = "c2" }).
				with("db", 3, "db", "db/0=2", "db/1=1").with("cluster", 7, "web"),
			want: []string{
				"cluster-relation-created cluster:7",
				"leader-elected", "upgrade-charm", "config-changed",
				"db-relation-changed db:3 db/0",
			},
		},
		{
			name:   "new relation: created, then joined+changed per member, sorted numerically",
			before: base,
			after:  base.with("db", 3, "db", "db/10=1", "db/2=1"),
			want: []string{
				"db-relation-created db:3",
				"db-relation-joined db:3 db/2", "db-relation-changed db:3 db/2",
				"db-relation-joined db:3 db/10", "db-relation-changed db:3 db/10",
			},
		},
		{
			name:   "ten edits of one member while busy give one changed",
			before: withDB,
			after:  base.with("db", 3, "db", "db/0=11", "db/1=1"),
			want:   []string{"db-relation-changed db:3 db/0"},
		},
		{
			name:   "app bag moved: changed with no remote unit, before joins and unit changes",
			before: withDB,
			after: withDB.with("db", 3, "db", "db/0=2", "db/1=1", "db/2=1").set(func(s *Snapshot) {
				s.Relations["db:3"].App = "5"
			}),
			want: []string{
				"db-relation-changed db:3 db",
				"db-relation-joined db:3 db/2", "db-relation-changed db:3 db/2",
				"db-relation-changed db:3 db/0",
			},
		},
		{
			name:   "members deleted while the agent was down are departed, first",
			before: base.with("db", 3, "db", "db/0=1", "db/1=1", "db/2=1"),
			after:  base.with("db", 3, "db", "db/1=2", "db/3=1"),
			want: []string{
				"db-relation-departed db:3 db/0",
				"db-relation-departed db:3 db/2",
				"db-relation-joined db:3 db/3", "db-relation-changed db:3 db/3",
				"db-relation-changed db:3 db/1",
			},
		},
		{
			name:   "relation removed: departed for each member left, then broken",
			before: withDB.with("cluster", 1, "web", "web/1=1"),
			after:  base.with("cluster", 1, "web", "web/1=1"),
			want: []string{
				"db-relation-departed db:3 db/0",
				"db-relation-departed db:3 db/1",
				"db-relation-broken db:3",
			},
		},
		{
			name:   "relation dying counts as gone",
			before: withDB,
			after:  withDB.set(func(s *Snapshot) { s.Relations["db:3"].Alive = false }),
			want: []string{
				"db-relation-departed db:3 db/0",
				"db-relation-departed db:3 db/1",
				"db-relation-broken db:3",
			},
		},
		{
			name:   "a relation that was never seen and is already dying runs nothing",
			before: base,
			after:  withDB.set(func(s *Snapshot) { s.Relations["db:3"].Alive = false }),
			want:   nil,
		},
		{
			name:   "peer relation gone: departed, never broken",
			before: base.with("cluster", 1, "web", "web/1=1", "web/2=1"),
			after:  base,
			want: []string{
				"cluster-relation-departed cluster:1 web/1",
				"cluster-relation-departed cluster:1 web/2",
			},
		},
		{
			name:   "unit dying: every relation broken that way, then stop and remove",
			before: withDB.with("cluster", 1, "web", "web/1=1").with("log", 9, "log"),
			after:  withDB.with("cluster", 1, "web", "web/1=2").set(func(s *Snapshot) { s.Life = Dying; s.Config = "9"; s.Leader = true }),
			want: []string{
				"cluster-relation-departed cluster:1 web/1",
				"db-relation-departed db:3 db/0",
				"db-relation-departed db:3 db/1",
				"db-relation-broken db:3",
				"log-relation-broken log:9",
				"stop", "remove",
			},
		},
		{
			name:   "a unit dying before it was ever installed runs nothing",
			before: nil,
			after:  withDB.set(func(s *Snapshot) { s.Life = Dying }),
			want:   nil,
		},
		{
			name:   "leader's own writes to its peer app bag wake nothing",
			before: base.with("cluster", 1, "web", "web/1=1").set(func(s *Snapshot) { s.Leader = true }),
			after: base.with("cluster", 1, "web", "web/1=1").set(func(s *Snapshot) {
				s.Leader = true
				s.Relations["cluster:1"].App = "2"
			}),
			want: nil,
		},
		{
			name:   "a follower sees its leader's peer app bag writes",
			before: base.with("cluster", 1, "web", "web/1=1"),
			after: base.with("cluster", 1, "web", "web/1=1").set(func(s *Snapshot) {
				s.Relations["cluster:1"].App = "2"
			}),
			want: []string{"cluster-relation-changed cluster:1 web"},
		},
		{
			name:   "relations are handled in id order",
			before: base.with("db", 12, "db", "db/0=1").with("db", 3, "db", "db/0=1"),
			after:  base.with("db", 12, "db", "db/0=2").with("db", 3, "db", "db/0=2"),
			want:   []string{"db-relation-changed db:3 db/0", "db-relation-changed db:12 db/0"},
		},
		{
			name:   "nil after yields nothing",
			before: base,
			after:  nil,
			want:   nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := lines(Derive(tt.before, tt.after))
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("Derive:\ngot:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

// TestDeriveEventFields checks what the hook environment is built from:
// remote app on every relation event, no remote unit on created, broken
// and app-bag changes, the departing unit on departed.
func TestDeriveEventFields(t *testing.T) {
	before := snap().with("db", 3, "db", "db/0=1")
	after := snap().with("db", 3, "db", "db/1=1").set(func(s *Snapshot) { s.Relations["db:3"].App = "2" })
	got := Derive(before, after)
	want := []charmapi.Event{
		{Hook: "db-relation-departed", Relation: "db:3", RemoteUnit: "db/0", RemoteApp: "db", Departing: "db/0"},
		{Hook: "db-relation-changed", Relation: "db:3", RemoteApp: "db"},
		{Hook: "db-relation-joined", Relation: "db:3", RemoteUnit: "db/1", RemoteApp: "db"},
		{Hook: "db-relation-changed", Relation: "db:3", RemoteUnit: "db/1", RemoteApp: "db"},
	}
	assertEvents(t, got, want)

	// The unit itself leaving names itself as the departing unit, and
	// relation-broken carries no remote unit.
	dying := before.set(func(s *Snapshot) { s.Life = Dying })
	got = Derive(before, dying)
	want = []charmapi.Event{
		{Hook: "db-relation-departed", Relation: "db:3", RemoteUnit: "db/0", RemoteApp: "db", Departing: "web/0"},
		{Hook: "db-relation-broken", Relation: "db:3", RemoteApp: "db"},
		{Hook: "stop"},
		{Hook: "remove"},
	}
	assertEvents(t, got, want)
}

// TestJoinedAlwaysFollowedByChanged checks Juju's ChangedPending rule over
// many shapes: every joined is directly followed by changed for the same
// unit and relation.
func TestJoinedAlwaysFollowedByChanged(t *testing.T) {
	before := snap().with("db", 3, "db", "db/0=1", "db/4=1").with("cluster", 1, "web", "web/2=1")
	after := snap().with("db", 3, "db", "db/0=2", "db/1=1", "db/2=1", "db/10=3").
		with("cluster", 1, "web", "web/1=1", "web/3=1").with("db", 8, "db", "db/5=1")
	after.Relations["db:3"].App = "7"
	for _, pair := range [][2]*Snapshot{{nil, after}, {before, after}} {
		evs := Derive(pair[0], pair[1])
		joins := 0
		for i, e := range evs {
			if !strings.HasSuffix(e.Hook, "-relation-joined") {
				continue
			}
			joins++
			if i+1 >= len(evs) {
				t.Fatalf("joined %v is last", e)
			}
			n := evs[i+1]
			if !strings.HasSuffix(n.Hook, "-relation-changed") || n.Relation != e.Relation || n.RemoteUnit != e.RemoteUnit {
				t.Errorf("joined %v followed by %v", e, n)
			}
		}
		if joins == 0 {
			t.Fatal("test shape has no joins")
		}
	}
}

// TestDeriveIsStableUnderReplay checks that deriving against what was just
// reached gives nothing: after a successful reconcile the unit is quiet.
func TestDeriveIsStableUnderReplay(t *testing.T) {
	after := snap().with("db", 3, "db", "db/0=2", "db/1=1").with("cluster", 1, "web", "web/1=1")
	after.Relations["db:3"].App = "3"
	if evs := Derive(after, after.clone()); len(evs) != 0 {
		t.Errorf("Derive(x, x) = %v; want nothing", lines(evs))
	}
}

func assertEvents(t *testing.T, got, want []charmapi.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d events %v; want %d %v", len(got), lines(got), len(want), lines(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("event %d = %+v; want %+v", i, got[i], want[i])
		}
	}
}

// TestCoalescingAcrossMissedSnapshots walks a history the unit never saw
// step by step: only its two end points matter.
func TestCoalescingAcrossMissedSnapshots(t *testing.T) {
	s0 := snap().with("db", 3, "db", "db/0=1")
	s1 := snap().with("db", 3, "db", "db/0=1", "db/5=1") // db/5 joins
	s2 := snap().with("db", 3, "db", "db/0=1", "db/5=2") // db/5 writes
	s3 := snap().with("db", 3, "db", "db/0=1")           // db/5 leaves
	if got := lines(Derive(s0, s1)); len(got) != 2 {
		t.Fatalf("joining alone: %v; want joined+changed", got)
	}
	if got := lines(Derive(s0, s2)); len(got) != 2 {
		t.Fatalf("joining and writing: %v; want joined+changed with the latest data", got)
	}
	if got := Derive(s0, s3); len(got) != 0 {
		t.Errorf("a unit that joined and left in between: %v; want nothing", lines(got))
	}

	// Ten edits of config and of one member while the unit was busy.
	prev := snap().with("db", 3, "db", "db/0=1")
	cur := prev
	for i := 2; i <= 11; i++ {
		tok := strconv.Itoa(i)
		cur = cur.with("db", 3, "db", "db/0="+tok).set(func(s *Snapshot) { s.Config = tok })
	}
	want := []string{"config-changed", "db-relation-changed db:3 db/0"}
	if got := lines(Derive(prev, cur)); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("ten edits: %v; want %v", got, want)
	}
}

func TestAddressChangeFiresConfigChanged(t *testing.T) {
	base := snap().set(func(s *Snapshot) { s.Address = "10.0.0.1" })
	moved := base.set(func(s *Snapshot) { s.Address = "10.0.0.2" })
	if got := strings.Join(lines(Derive(base, moved)), ","); got != "config-changed" {
		t.Errorf("address moved: %s; want config-changed", got)
	}
	both := moved.set(func(s *Snapshot) { s.Config = "2" })
	if got := strings.Join(lines(Derive(base, both)), ","); got != "config-changed" {
		t.Errorf("address and config moved: %s; want one config-changed", got)
	}
	// A Seen recorded before addresses were has none: no event for it.
	unknown := base.set(func(s *Snapshot) { s.Address = "" })
	if got := Derive(unknown, base); len(got) != 0 {
		t.Errorf("address first recorded: %v; want nothing", lines(got))
	}
	seen := &model.Seen{Life: model.Alive, Charm: "c", ConfigRev: 3, Address: "10.0.0.1"}
	next := *seen
	next.Address = "10.0.0.7"
	if got := strings.Join(lines(Derive(FromSeen("web/0", seen, nil), FromSeen("web/0", &next, nil))), ","); got != "config-changed" {
		t.Errorf("address moved between Seens: %s; want config-changed", got)
	}
}
