package api_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

// deployRelated deploys db (two units, a config option with a default)
// related to web (one unit), all on machine m1.
func deployRelated(t *testing.T, n *testNode) {
	t.Helper()
	ctx := ctxT(t)
	if _, err := n.store.Apply(ctx, &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: "m1", Address: "10.0.0.1"}}); err != nil {
		t.Fatal(err)
	}
	one, two := 1, 2
	env := model.Environment{APIVersion: model.APIVersion, Name: "lookup", Services: map[string]model.ServiceSpec{
		"db":  {CharmHash: "h-db", Units: &two, Placement: []string{"m1"}, Config: map[string]any{"max": 10}},
		"web": {CharmHash: "h-web", Units: &one, Placement: []string{"m1"}},
	}, Relations: map[string][]string{"web-db": {"web:db", "db:db"}}}
	charms := map[string]*model.Charm{
		"h-db": {Hash: "h-db", Meta: model.CharmMeta{Name: "db",
			Provides: map[string]model.Endpoint{"db": {Interface: "pg"}},
			Options: map[string]model.Option{
				"max":  {Type: "int", Default: 5, Description: "most connections"},
				"port": {Type: "int", Default: 5432},
				"name": {Type: "string"},
			}}},
		"h-web": {Hash: "h-web", Meta: model.CharmMeta{Name: "web", Requires: map[string]model.Endpoint{"db": {Interface: "pg"}}}},
	}
	if _, err := n.store.Apply(ctx, &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}}); err != nil {
		t.Fatal(err)
	}
}

// TestUnitIsWhatStatusAndStateSay: GET /v1/units/UNIT answers what
// show-unit made of the whole state and status, and explains a name that
// is not a unit; only the operator may ask.
func TestUnitIsWhatStatusAndStateSay(t *testing.T) {
	n := startNode(t, "n1")
	deployRelated(t, n)
	op := api.NewClient([]string{n.addr}, operatorToken, nil)
	ctx := ctxT(t)

	got, err := op.Unit(ctx, "web/0")
	if err != nil {
		t.Fatal(err)
	}
	st, err := op.State(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	status, err := op.Status(ctx, false, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := engine.NewUnitDetail(st, "web/0", status.Units["web/0"])
	// Since is when this leader first showed the phase: both reads
	// record it at the first of them.
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GET /v1/units/web/0 = %s\nfrom state and status: %s", mustJSON(t, got), mustJSON(t, want))
	}
	if got.Machine != "m1" || got.Address != "10.0.0.1" || got.Phase != engine.Pending || len(got.Relations) != 1 {
		t.Fatalf("web/0 = %s", mustJSON(t, got))
	}
	if r := got.Relations[0]; r.Remote != "db:db" || r.Endpoint != "db" || r.Interface != "pg" || strings.Join(r.Members, ",") != "db/0,db/1" {
		t.Errorf("web/0's relation = %+v, want db:db with db/0 and db/1", r)
	}

	for _, c := range []struct {
		path string
		code int
		says string
	}{
		{"/v1/units/db", http.StatusNotFound, "db is a service; its units are db/0, db/1"},
		{"/v1/units/db/7", http.StatusNotFound, `no unit "db/7" in the environment`},
		{"/v1/units/nosuch", http.StatusNotFound, `no unit "nosuch"`},
		{"/v1/units/db/x", http.StatusBadRequest, "is not a unit number"},
		{"/v1/units/Db/0", http.StatusBadRequest, "invalid"},
		{"/v1/units/" + strings.Repeat("a", 200), http.StatusBadRequest, "the limit is 63"},
	} {
		code, e, _ := call(t, "GET", n.addr+c.path, operatorToken, nil)
		if code != c.code || e == nil || !strings.Contains(e.Message, c.says) {
			t.Errorf("GET %s: %d %v, want %d saying %q", c.path, code, e, c.code, c.says)
		}
	}
	_, err = op.Unit(ctx, "db")
	if !errors.Is(err, api.ErrNotFound) || api.IsUnknownRoute(err) {
		t.Errorf("a service's name: %v, want not found, and not an unknown route", err)
	}
	if code, _, _ := call(t, "GET", n.addr+"/v1/units/web/0", joinToken, nil); code != http.StatusForbidden {
		t.Errorf("the join token reading a unit: %d, want 403", code)
	}
}

// TestServiceConfigSaysWhereEachValueComesFrom: GET
// /v1/services/SERVICE/config marks each option set, default or unset,
// and explains a service that is not there.
func TestServiceConfigSaysWhereEachValueComesFrom(t *testing.T) {
	n := startNode(t, "n1")
	deployRelated(t, n)
	op := api.NewClient([]string{n.addr}, operatorToken, nil)
	ctx := ctxT(t)

	sc, err := op.ServiceConfig(ctx, "db")
	if err != nil {
		t.Fatal(err)
	}
	st, err := op.State(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	want, err := api.NewServiceConfig(st, "db")
	if err != nil {
		t.Fatal(err)
	}
	// Through JSON, as the CLI reads it.
	var wantJSON api.ServiceConfig
	if err := json.Unmarshal(mustJSON(t, want), &wantJSON); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sc, &wantJSON) {
		t.Errorf("GET config = %s\nfrom the state: %s", mustJSON(t, sc), mustJSON(t, want))
	}
	sources := map[string]string{}
	for k, v := range sc.Config {
		sources[k] = v.Source
	}
	if !reflect.DeepEqual(sources, map[string]string{"max": "set", "port": "default", "name": "unset"}) || sc.Charm != "db h-db" {
		t.Errorf("db's config = %s", mustJSON(t, sc))
	}

	for _, c := range []struct {
		path string
		code int
		says string
	}{
		{"/v1/services/nosuch/config", http.StatusNotFound, `no service "nosuch" in the environment (services: db, web)`},
		{"/v1/services/No/config", http.StatusBadRequest, "invalid"},
	} {
		code, e, _ := call(t, "GET", n.addr+c.path, operatorToken, nil)
		if code != c.code || e == nil || !strings.Contains(e.Message, c.says) {
			t.Errorf("GET %s: %d %v, want %d saying %q", c.path, code, e, c.code, c.says)
		}
	}
}
