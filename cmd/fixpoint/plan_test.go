package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

// TestPlanAgainstAnOlderControlPlane: a control plane from before POST
// /v1/plan answers it 404; plan and apply then read its state and plan
// here, with the same answer the control plane would give.
func TestPlanAgainstAnOlderControlPlane(t *testing.T) {
	running := model.NewState()
	running.Name, running.EnvIndex = "old", 7
	running.Charms["h1"] = &model.Charm{Hash: "h1", Meta: model.CharmMeta{Name: "db"}}
	body, err := json.Marshal(running)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/state", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	one := 1
	p := &prepared{deploy: &model.Deploy{
		Env: model.Environment{APIVersion: model.APIVersion, Name: "old", Services: map[string]model.ServiceSpec{
			"db":  {CharmHash: "h1", Units: &one},
			"web": {CharmHash: "h2", Units: &one}}},
		Charms: map[string]*model.Charm{
			"h1": {Hash: "h1", Meta: model.CharmMeta{Name: "db"}},
			"h2": {Hash: "h2", Meta: model.CharmMeta{Name: "web"}}},
	}}
	plan, err := planAgainst(context.Background(), api.NewClient([]string{srv.URL}, "token", nil), p)
	if err != nil {
		t.Fatal(err)
	}
	desired, err := model.Resolve(&p.deploy.Env, p.deploy.Charms)
	if err != nil {
		t.Fatal(err)
	}
	want := &api.Plan{Name: "old", EnvIndex: 7, Changes: model.Plan(running, desired), Missing: []string{"h2"}, MissingResources: []string{}}
	if !reflect.DeepEqual(plan, want) || len(plan.Changes) == 0 {
		t.Errorf("plan against a control plane without /v1/plan = %+v, want %+v", plan, want)
	}
}
