package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

// GET /v1/status/timeline answers the units per phase since the last
// apply, waits like status for the generation to move, and needs a
// credential.
func TestStatusTimelineFollowsPhases(t *testing.T) {
	n := startNode(t, "n1")
	ctx := ctxT(t)
	if _, err := n.store.Apply(ctx, &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: "m1", Address: "10.0.0.1"}}); err != nil {
		t.Fatal(err)
	}
	one := 1
	env := model.Environment{APIVersion: model.APIVersion, Name: "tl", Services: map[string]model.ServiceSpec{
		"a": {CharmHash: "h-x", Units: &one, Placement: []string{"m1"}},
	}}
	charms := map[string]*model.Charm{"h-x": {Hash: "h-x", Meta: model.CharmMeta{Name: "x"}}}
	if _, err := n.store.Apply(ctx, &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}}); err != nil {
		t.Fatal(err)
	}
	op := api.NewClient([]string{n.addr}, operatorToken, nil)
	sum, err := op.WaitSummary(ctx, false, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	get := func(query string) (*engine.Timeline, int) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, n.addr+"/v1/status/timeline"+query, nil)
		req.Header.Set("Authorization", "Bearer "+operatorToken)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var tl engine.Timeline
		if res.StatusCode == http.StatusOK {
			if err := json.NewDecoder(res.Body).Decode(&tl); err != nil {
				t.Fatal(err)
			}
		}
		return &tl, res.StatusCode
	}
	tl, code := get("")
	if code != http.StatusOK || len(tl.Samples) == 0 || tl.Samples[len(tl.Samples)-1].Pending != 1 || tl.EnvIndex == 0 {
		t.Fatalf("timeline: %d %+v", code, tl)
	}

	// A hand-out takes no entry; the waiting timeline hears of it.
	if work, err := op.Claim(ctx, "m1", 0, 0); err != nil || len(work) != 1 {
		t.Fatalf("claim: %d units, %v; want a/0", len(work), err)
	}
	_, code = get(fmt.Sprintf("?index=%d&generation=%d&wait=1m", sum.Index, sum.Generation))
	if code != http.StatusOK {
		t.Fatalf("timeline wait: %d", code)
	}
	// The sampler is not running here: the next summary records.
	if _, err := op.WaitSummary(ctx, false, nil, 0); err != nil {
		t.Fatal(err)
	}
	after, _ := get("")
	if last := after.Samples[len(after.Samples)-1]; last.Reconciling != 1 || !last.Time.After(time.Time{}) {
		t.Fatalf("after the hand-out: %+v", after)
	}

	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, n.addr+"/v1/status/timeline", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("without a token: %d, want 401", res.StatusCode)
	}
}
