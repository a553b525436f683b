package model

import (
	"strings"
	"testing"
)

func inferMetas() map[string]*CharmMeta {
	ep := func(iface string) Endpoint { return Endpoint{Interface: iface} }
	return map[string]*CharmMeta{
		"wiki": {Name: "mediawiki",
			Requires: map[string]Endpoint{"db": ep("mysql"), "slave": ep("mysql"), "cache": ep("memcache")},
			Peers:    map[string]Endpoint{"ring": ep("wiki-peer")}},
		"db":    {Name: "mariadb", Provides: map[string]Endpoint{"db": ep("mysql")}, Peers: map[string]Endpoint{"cluster": ep("mysql-peer")}},
		"cache": {Name: "memcached", Provides: map[string]Endpoint{"cache": ep("memcache")}},
		"log": {Name: "rsyslog", Subordinate: true,
			Requires: map[string]Endpoint{"host": {Interface: JujuInfo, Scope: Container}}},
		"mon":  {Name: "monitor", Requires: map[string]Endpoint{"target": ep(JujuInfo), "agent": {Interface: JujuInfo, Scope: Container}}},
		"twin": {Name: "twin", Provides: map[string]Endpoint{"a": ep("x"), "b": ep("x")}},
		"sink": {Name: "sink", Requires: map[string]Endpoint{"in": ep("x")}},
	}
}

func TestInferRelation(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want string // "a:x b:y", or the error's start
		err  bool
	}{
		{a: "wiki:db", b: "db", want: "wiki:db db:db"},
		{a: "db", b: "wiki:db", want: "db:db wiki:db"},
		{a: "wiki", b: "cache", want: "wiki:cache cache:cache"},
		// Juju's own example: the named side does not narrow the other.
		{a: "wiki", b: "db:db", err: true, want: `ambiguous relation: "wiki db:db" could refer to "wiki:db db:db"; "wiki:slave db:db"`},
		{a: "wiki", b: "db", err: true, want: `ambiguous relation: "wiki db" could refer to "wiki:db db:db"; "wiki:slave db:db"`},
		// A subordinate's container-scoped juju-info requirer fits the
		// principal's implicit juju-info provider.
		{a: "log", b: "wiki", want: "log:host wiki:juju-info"},
		// Container scope needs a subordinate: mon's container endpoint
		// is no candidate, its global one is.
		{a: "mon", b: "db", want: "mon:target db:juju-info"},
		// Implicit candidates are dropped only to break a tie, and
		// listed with the rest when the tie stays.
		{a: "twin", b: "sink", err: true, want: `ambiguous relation: "twin sink" could refer to "twin:a sink:in"; "twin:b sink:in"`},
		{a: "twin:b", b: "sink", want: "twin:b sink:in"},
		{a: "cache", b: "db", err: true, want: `no relations found for "cache db"`},
		{a: "wiki:ring", b: "db", err: true, want: "endpoint wiki:ring is a peer endpoint"},
		{a: "wiki:nope", b: "db", err: true, want: `service wiki (charm mediawiki) has no endpoint "nope"`},
		{a: "ghost", b: "db", err: true, want: `unknown service "ghost"`},
		{a: "db", b: "db", err: true, want: "cannot relate service db to itself"},
		{a: "db:", b: "wiki", err: true, want: `invalid endpoint "db:"`},
		{a: ":db", b: "wiki", err: true, want: `invalid endpoint ":db"`},
	} {
		got, err := InferRelation(tc.a, tc.b, inferMetas())
		switch {
		case tc.err && err == nil:
			t.Errorf("%s %s: got %s, want error %q", tc.a, tc.b, got, tc.want)
		case tc.err && !strings.HasPrefix(err.Error(), tc.want):
			t.Errorf("%s %s: error %q, want it to start %q", tc.a, tc.b, err, tc.want)
		case !tc.err && err != nil:
			t.Errorf("%s %s: %v", tc.a, tc.b, err)
		case !tc.err && got.String() != tc.want:
			t.Errorf("%s %s: got %s, want %s", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestFindRelation(t *testing.T) {
	rels := []BoundRelation{
		{Name: "wiki-db", Ends: RelationEnds{"wiki:db", "db:db"}},
		{Name: "wiki-slave-db-db", Ends: RelationEnds{"wiki:slave", "db:db"}},
		{Name: "wiki-cache", Ends: RelationEnds{"wiki:cache", "cache:cache"}},
	}
	for _, tc := range []struct{ a, b, want string }{
		{"wiki", "cache", "wiki-cache"},
		{"cache", "wiki", "wiki-cache"},
		{"wiki:slave", "db", "wiki-slave-db-db"},
		{"db:db", "wiki:db", "wiki-db"},
		{"wiki", "db", `error: ambiguous relation: "wiki db" could refer to "wiki:db db:db"; "wiki:slave db:db"`},
		{"db", "cache", `error: relation matching "db cache" not found; the relations of db are: "wiki:db db:db", "wiki:slave db:db"`},
	} {
		got, err := FindRelation(tc.a, tc.b, rels)
		s := got.Name
		if err != nil {
			s = "error: " + err.Error()
		}
		if !strings.HasPrefix(s, tc.want) {
			t.Errorf("%s %s: got %q, want %q", tc.a, tc.b, s, tc.want)
		}
	}
}

func TestNameRelation(t *testing.T) {
	taken := map[string]bool{}
	var got []string
	for range 3 {
		got = append(got, NameRelation(RelationEnds{"wiki:db", "db:db"}, taken))
	}
	want := []string{"wiki-db", "wiki-db-db-db", "wiki-db-2"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("names %v, want %v", got, want)
	}
}
