package model

import (
	"reflect"
	"strings"
	"testing"
)

func editEnv() *Environment {
	two := 2
	return &Environment{APIVersion: APIVersion, Name: "shop",
		Services: map[string]ServiceSpec{
			"web": {Charm: "./web", Units: &two, Config: map[string]any{"port": int64(80), "name": "a"}},
			"db":  {Charm: "./db"},
		},
		Relations: map[string][]string{"web-db": {"web:db", "db:db"}},
	}
}

var webMeta = &CharmMeta{Name: "web", Options: map[string]Option{
	"port":  {Type: "int", Default: 8080},
	"name":  {Type: "string"},
	"debug": {Type: "boolean"},
	"ratio": {Type: "float"},
}}

func TestEditConfig(t *testing.T) {
	env := editEnv()
	orig := editEnv()
	cp := EditCopy(env)
	if err := EditConfig(cp, "web", webMeta, map[string]any{"ratio": 1}, map[string]string{"port": "8081", "debug": "true"}, []string{"name"}); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"port": int64(8081), "debug": true, "ratio": float64(1)}
	if got := cp.Services["web"].Config; !reflect.DeepEqual(got, want) {
		t.Errorf("config %#v, want %#v", got, want)
	}
	if !reflect.DeepEqual(env, orig) {
		t.Errorf("the edit changed the document it copied: %#v", env.Services["web"])
	}
	// Resetting every key leaves no config at all, as a file that sets none.
	if err := EditConfig(cp, "web", webMeta, nil, nil, []string{"port", "debug", "ratio"}); err != nil {
		t.Fatal(err)
	}
	if c := cp.Services["web"].Config; c != nil {
		t.Errorf("config after resetting every key: %#v, want none", c)
	}
	for _, tc := range []struct {
		raw   map[string]string
		reset []string
		svc   string
		want  string
	}{
		{raw: map[string]string{"prot": "1"}, want: `charm web of service web has no option "prot" (it has: debug, name, port, ratio)`},
		{reset: []string{"prot"}, want: `has no option "prot"`},
		{raw: map[string]string{"port": "eighty"}, want: `option port of service web (charm web) is of type int: "eighty" is not an int`},
		{raw: map[string]string{"debug": "maybe"}, want: `is not a boolean`},
		{raw: map[string]string{"port": "1"}, reset: []string{"port"}, want: "option port is both set and reset"},
		{svc: "nope", raw: map[string]string{"port": "1"}, want: `environment shop has no service "nope" (services: db, web)`},
	} {
		svc := tc.svc
		if svc == "" {
			svc = "web"
		}
		cp := EditCopy(env)
		err := EditConfig(cp, svc, webMeta, nil, tc.raw, tc.reset)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v: error %v, want %q", tc.raw, tc.reset, err, tc.want)
		}
		if !reflect.DeepEqual(cp, env) {
			t.Errorf("%v %v: a refused edit changed the document", tc.raw, tc.reset)
		}
	}
}

func TestEditUnitsAndServices(t *testing.T) {
	env := EditCopy(editEnv())
	if err := EditAddUnits(env, "db", 2, &CharmMeta{Name: "db"}); err != nil {
		t.Fatal(err)
	}
	if n := ServiceUnits(env.Services["db"]); n != 3 {
		t.Errorf("db units after adding 2 to the default 1: %d", n)
	}
	if err := EditAddUnits(env, "db", 1, &CharmMeta{Name: "log", Subordinate: true}); err == nil || !strings.Contains(err.Error(), "subordinate") {
		t.Errorf("adding units to a subordinate: %v", err)
	}
	alive := func(u string) bool {
		return map[string]bool{"web/0": true, "web/3": true, "db/0": true, "db/1": true, "db/2": true}[u]
	}
	if err := EditRemoveUnits(env, []string{"web/3", "db/1"}, alive); err != nil {
		t.Fatal(err)
	}
	if w, d := ServiceUnits(env.Services["web"]), ServiceUnits(env.Services["db"]); w != 1 || d != 2 {
		t.Errorf("units after removing web/3 and db/1: web %d db %d, want 1 and 2", w, d)
	}
	for units, want := range map[string]string{
		"web/1":       "service web has no unit web/1, or it is already going",
		"web/0 web/0": "unit web/0 is named twice",
		"web":         `"web" is not a unit name`,
		"mq/0":        `unit mq/0: environment shop has no service "mq"`,
	} {
		cp := EditCopy(env)
		err := EditRemoveUnits(cp, strings.Fields(units), alive)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("remove %s: %v, want %q", units, err, want)
		}
	}
	if err := EditAddService(env, "web", ServiceSpec{Charm: "x"}); err == nil || !strings.Contains(err.Error(), "service web already exists") {
		t.Errorf("adding an existing service: %v", err)
	}
	if err := EditRemoveServices(env, []string{"db"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := env.Services["db"]; ok || len(env.Relations) != 0 {
		t.Errorf("after remove-service db: services %v relations %v; want db and its relation gone", env.Services, env.Relations)
	}
}

func TestEditAddRelation(t *testing.T) {
	env := EditCopy(editEnv())
	existing := []BoundRelation{{Name: "web-db", Ends: RelationEnds{"web:db", "db:db"}}}
	if _, err := EditAddRelation(env, RelationEnds{"db:db", "web:db"}, existing); err == nil || !strings.Contains(err.Error(), `relation already exists: "db:db web:db" is relation web-db`) {
		t.Errorf("adding an existing relation: %v", err)
	}
	name, err := EditAddRelation(env, RelationEnds{"web:cache", "db:cache"}, existing)
	if err != nil || name != "web-cache-db-cache" {
		t.Fatalf("new relation named %q (%v), want web-cache-db-cache (web-db is taken)", name, err)
	}
	if err := EditRemoveRelation(env, "web-db"); err != nil {
		t.Fatal(err)
	}
	if got := env.Relations; len(got) != 1 || got[name] == nil {
		t.Errorf("relations %v, want only %s", got, name)
	}
}
