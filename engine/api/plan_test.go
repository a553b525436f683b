package api_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

// TestPlanIsWhatTheDeployWouldChange: POST /v1/plan answers what the
// deploy of its body would change, the environment's index to stamp the
// deploy with and the charms to upload first, and changes nothing; a
// deploy then makes exactly those changes, and the same plan is empty.
func TestPlanIsWhatTheDeployWouldChange(t *testing.T) {
	n := startNode(t, "n1")
	op := api.NewClient([]string{n.addr}, operatorToken, nil)
	archive := []byte("a charm archive for the plan test")
	sum := sha256.Sum256(archive)
	hash := hex.EncodeToString(sum[:])
	deploy := func(units int) *model.Deploy {
		return &model.Deploy{
			Env: model.Environment{APIVersion: model.APIVersion, Name: "plan", Services: map[string]model.ServiceSpec{
				"db": {CharmHash: hash, Units: &units}}},
			Charms: map[string]*model.Charm{hash: {Hash: hash, Meta: model.CharmMeta{Name: "db"}}},
		}
	}
	before := stateJSON(t, n)
	plan, err := op.Plan(ctxT(t), deploy(2))
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Changes) != 2 || plan.Changes[0].Kind != model.AddService || plan.Changes[1].Kind != model.AddUnits ||
		!reflect.DeepEqual(plan.Missing, []string{hash}) || plan.Name != "" {
		t.Fatalf("plan of a first deploy = %+v; want db and its units added, its charm missing", plan)
	}
	if after := stateJSON(t, n); after != before {
		t.Fatalf("a plan changed the state:\n%s\nto\n%s", before, after)
	}

	code, e, _ := call(t, http.MethodPut, n.addr+"/v1/charms/"+hash, operatorToken, archive)
	if code != http.StatusOK && code != http.StatusCreated && code != http.StatusNoContent {
		t.Fatalf("upload: %d %v", code, e)
	}
	d := deploy(2)
	d.BaseIndex = plan.EnvIndex
	resp, err := op.Deploy(ctxT(t), d)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(resp.Changes, plan.Changes) {
		t.Errorf("the deploy made %+v; the plan said %+v", resp.Changes, plan.Changes)
	}

	plan, err = op.Plan(ctxT(t), deploy(2))
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Changes) != 0 || len(plan.Missing) != 0 || plan.Name != "plan" || plan.EnvIndex == 0 {
		t.Errorf("plan of the running environment = %+v; want no change, nothing missing, its name and index", plan)
	}
	plan, err = op.Plan(ctxT(t), deploy(3))
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Changes) != 1 || plan.Changes[0].Kind != model.AddUnits {
		t.Errorf("plan of one unit more = %+v; want add-units", plan.Changes)
	}

	// The state knows the charm, but this node lost its archive (a node
	// that took no upload, whose peers with the archive are cut off): the
	// plan asks for it again, for this node.
	if err := os.Remove(filepath.Join(n.charms, hash+".tar")); err != nil {
		t.Fatal(err)
	}
	plan, err = op.Plan(ctxT(t), deploy(3))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(plan.Missing, []string{hash}) {
		t.Errorf("plan on a node without the charm's archive: missing %v, want %s", plan.Missing, hash)
	}
}

// TestPlanRefusesWhatTheDeployWould: a plan checks its body as the deploy
// does (409 with the model's problems, 400 for a malformed body), and an
// agent's credential may not plan.
func TestPlanRefusesWhatTheDeployWould(t *testing.T) {
	n := startNode(t, "n1")
	op := api.NewClient([]string{n.addr}, operatorToken, nil)
	_, err := op.Plan(ctxT(t), &model.Deploy{Env: model.Environment{APIVersion: "fixpoint/v0", Name: "x"}})
	var ps model.Problems
	if !errors.Is(err, api.ErrRefused) || !errors.As(err, &ps) || len(ps) == 0 || ps[0].Path[0] != "apiVersion" {
		t.Errorf("planning an unknown apiVersion: %v, want refused with a problem at apiVersion", err)
	}
	code, e, _ := call(t, http.MethodPost, n.addr+"/v1/plan", operatorToken, []byte(`{"env": {"colour": "red"}}`))
	if code != http.StatusBadRequest || !errors.Is(e, api.ErrBadRequest) || !bytes.Contains([]byte(e.Message), []byte("colour")) {
		t.Errorf("unknown field: %d %v, want 400 naming the field", code, e)
	}
	code, _, _ = call(t, http.MethodPost, n.addr+"/v1/plan", joinToken, []byte(`{}`))
	if code != http.StatusForbidden {
		t.Errorf("a plan with the join token: %d, want 403", code)
	}
}
