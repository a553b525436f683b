package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

// olderControlPlane serves the state and status of a control plane from
// before GET /v1/units and /v1/services: its router answers those 404.
func olderControlPlane(t *testing.T) (*api.Client, *model.State, *engine.Status) {
	t.Helper()
	st := model.NewState()
	st.Name = "old"
	st.Machines["m1"] = &model.Machine{Name: "m1", Address: "10.0.0.9"}
	st.Charms["h-db"] = &model.Charm{Hash: "h-db", Meta: model.CharmMeta{Name: "db", Options: map[string]model.Option{
		"port": {Type: "int", Default: 5432}, "max": {Type: "int", Default: 5}}}}
	st.Services["db"] = &model.Service{Name: "db", Charm: "h-db", Units: 1, Leader: "db/0", Config: map[string]any{"max": 9, "port": 5432}}
	st.Units["db/0"] = &model.Unit{Name: "db/0", Service: "db", Machine: "m1", State: map[string]string{"k": "v"}}
	status := &engine.Status{Units: map[string]*engine.UnitStatus{
		"db/0": {Service: "db", Machine: "m1", Phase: engine.Settled, Leader: true, Since: time.Unix(1700000000, 0).UTC()}}}
	mux := http.NewServeMux()
	serve := func(v any) http.HandlerFunc {
		body, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) }
	}
	mux.HandleFunc("GET /v1/state", serve(st))
	mux.HandleFunc("GET /v1/status", serve(status))
	mux.HandleFunc("GET /v1/logs", serve(api.Logs{}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	// What the CLI reads back: the state through JSON.
	var read model.State
	if err := json.Unmarshal([]byte(mustJSON(st)), &read); err != nil {
		t.Fatal(err)
	}
	return api.NewClient([]string{srv.URL}, "token", nil), &read, status
}

// TestLookupsAgainstAnOlderControlPlane: show-unit and config against a
// control plane without the narrow reads work them out from the whole
// state, with what the newer control plane would answer.
func TestLookupsAgainstAnOlderControlPlane(t *testing.T) {
	c, st, status := olderControlPlane(t)
	ctx := context.Background()

	d, err := showUnit(ctx, c, "db/0", 5)
	if err != nil {
		t.Fatal(err)
	}
	want := engine.NewUnitDetail(st, "db/0", status.Units["db/0"])
	if !reflect.DeepEqual(d.UnitDetail, want) || d.Address != "10.0.0.9" || !d.Leader || d.State["k"] != "v" {
		t.Errorf("show-unit from the state = %+v, want %+v", d.UnitDetail, want)
	}
	if _, err := showUnit(ctx, c, "db", 0); err == nil || !strings.Contains(err.Error(), "db is a service; its units are db/0") {
		t.Errorf("show-unit of a service: %v", err)
	}

	sc, err := serviceConfig(ctx, c, "db")
	if err != nil {
		t.Fatal(err)
	}
	if sc.Config["max"].Source != "set" || sc.Config["port"].Source != "default" || sc.Charm != "db h-db" {
		t.Errorf("config from the state = %s", mustJSON(sc))
	}
	if _, err := serviceConfig(ctx, c, "web"); err == nil || !strings.Contains(err.Error(), `no service "web" in the environment (services: db)`) {
		t.Errorf("config of a missing service: %v", err)
	}
	if _, err := serviceConfig(ctx, c, "db/0"); err == nil || !strings.Contains(err.Error(), "fixpoint config db") {
		t.Errorf("config of a unit: %v", err)
	}
}
