package events

import (
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

func TestFromSeen(t *testing.T) {
	if s := FromSeen("web/0", nil, nil); s.Installed || len(s.Relations) != 0 {
		t.Fatalf("FromSeen(nil) = %+v; want a never-installed snapshot", s)
	}
	members := func(names ...string) model.Members { return model.NewMembers(names) }
	seen := &model.Seen{
		Life: model.Alive, Charm: "sha256:aa", ConfigRev: 4, Leader: false, LeaderRev: 9,
		Relations: model.NewSeenRelations(map[int]*model.SeenRelation{
			3: {Endpoint: "db", Members: members("db/0", "db/1"), At: 15, App: 0},
			1: {Endpoint: "cluster", Members: members("web/1"), At: 7, App: 20},
			5: {Endpoint: "log"},
		}),
	}
	// revs are the members' settings revisions now, per relation.
	revs := map[int]map[string]uint64{3: {"db/0": 12, "db/1": 15}, 1: {"web/1": 7}}
	lookup := func(id int) (RelInfo, bool) {
		rev := func(u string) (uint64, bool) { r, ok := revs[id][u]; return r, ok }
		switch id {
		case 3:
			return RelInfo{RemoteApp: "db", Revision: rev}, true
		case 1:
			return RelInfo{RemoteApp: "web", Peer: true, Revision: rev}, true
		}
		return RelInfo{}, false // relation 5 is no longer in the state
	}
	s := FromSeen("web/0", seen, lookup)
	if !s.Installed || s.Life != Alive || s.Config != "4" || s.LeaderData != "9" || s.Charm != "sha256:aa" {
		t.Errorf("FromSeen = %+v", s)
	}
	db := s.Relations["db:3"]
	if db == nil || db.RemoteApp != "db" || db.Peer || db.App != "" || db.Members["db/1"] != "15" || !db.Alive {
		t.Errorf("db:3 = %+v", db)
	}
	if c := s.Relations["cluster:1"]; c == nil || !c.Peer || c.App != "20" {
		t.Errorf("cluster:1 = %+v", c)
	}
	if l := s.Relations["log:5"]; l == nil || l.RemoteApp != "" || l.Peer {
		t.Errorf("log:5 = %+v", l)
	}
	if err := s.Validate(); err != nil {
		t.Error(err)
	}

	// Without a lookup the remote service comes from the members, and
	// one's own service on the other side means a peer relation.
	s = FromSeen("web/0", seen, nil)
	if c := s.Relations["cluster:1"]; !c.Peer || c.RemoteApp != "web" {
		t.Errorf("cluster:1 without lookup = %+v", c)
	}
	if d := s.Relations["db:3"]; d.Peer || d.RemoteApp != "db" {
		t.Errorf("db:3 without lookup = %+v", d)
	}

	// db/1 writes at 30 and db/0 not: a Seen taken after (mark 30)
	// derives one changed, for db/1 only; the same Seen again derives
	// nothing.
	revs[3]["db/1"] = 30
	next := *seen
	next.Relations = model.SeenRelations{}
	for id, r := range seen.Relations.All() {
		c := *r
		if id == 3 {
			c.At = 30
		}
		next.Relations.Set(id, c)
	}
	got := lines(Derive(FromSeen("web/0", seen, lookup), FromSeen("web/0", &next, lookup)))
	if strings.Join(got, ",") != "db-relation-changed db:3 db/1" {
		t.Errorf("Derive over Seen = %v", got)
	}
	if got := Derive(FromSeen("web/0", &next, lookup), FromSeen("web/0", &next, lookup)); len(got) != 0 {
		t.Errorf("Derive of a Seen against itself = %v", lines(got))
	}
}

func TestFromUniverse(t *testing.T) {
	u := &charmapi.Universe{
		API: charmapi.API, Unit: "web/0", Service: "web", Charm: "sha256:aa", Life: "alive",
		Config:     map[string]any{"port": 80.0},
		LeaderData: map[string]string{},
		Relations: []charmapi.Relation{
			{Ident: "db:3", ID: 3, Name: "db", Role: "requires", RemoteService: "db",
				Units: map[string]map[string]string{"db/0": {"host": "10.0.0.1"}}},
			{Ident: "cluster:1", ID: 1, Name: "cluster", Role: "peer", RemoteService: "web",
				App: map[string]string{"primary": "web/0"}},
		},
	}
	s, err := FromUniverse(u)
	if err != nil {
		t.Fatal(err)
	}
	if s.LeaderData != "" || s.Config == "" || !s.Installed {
		t.Errorf("FromUniverse = %+v", s)
	}
	if c := s.Relations["cluster:1"]; !c.Peer || c.App == "" {
		t.Errorf("peer relation: %+v; want peer with the service's bag as app", c)
	}
	if d := s.Relations["db:3"]; d.App != "" || d.Members["db/0"] == "" {
		t.Errorf("db:3 = %+v", d)
	}

	// Same content, same tokens; other content, other tokens.
	s2, _ := FromUniverse(u)
	if got := Derive(s, s2); len(got) != 0 {
		t.Errorf("same universe derived %v", lines(got))
	}
	u.Relations[0].Units["db/0"] = map[string]string{"host": "10.0.0.2"}
	u.Config = map[string]any{"port": 81.0}
	s3, _ := FromUniverse(u)
	want := "config-changed,db-relation-changed db:3 db/0"
	if got := strings.Join(lines(Derive(s, s3)), ","); got != want {
		t.Errorf("Derive = %s; want %s", got, want)
	}
}

func TestFromUniverseRejects(t *testing.T) {
	for name, u := range map[string]*charmapi.Universe{
		"bad life":       {Unit: "web/0", Life: "dead"},
		"ident mismatch": {Unit: "web/0", Relations: []charmapi.Relation{{Ident: "db:4", ID: 3, Name: "db"}}},
		"no endpoint":    {Unit: "web/0", Relations: []charmapi.Relation{{ID: 3}}},
		"listed twice":   {Unit: "web/0", Relations: []charmapi.Relation{{ID: 3, Name: "db"}, {ID: 3, Name: "db"}}},
	} {
		if _, err := FromUniverse(u); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := FromUniverse(nil); err == nil {
		t.Error("nil universe: no error")
	}
}
