package engine

import (
	"context"
	"testing"

	"github.com/fixpoint/fixpoint/model"
)

// TestStatusShowsTheLeadersApplicationStatus: what an old-hook or ops
// leader set with status-set --application (kept in its private state by
// the hook tools) is its service's status; a follower's is not.
func TestStatusShowsTheLeadersApplicationStatus(t *testing.T) {
	s := newMemStore()
	shop(t, s, 2, 0)
	results := []model.Result{
		{Unit: "db/0", Hash: hashOf(s, "db/0"), Leader: true, Seen: &model.Seen{Life: model.Alive},
			State: map[string]string{model.StateAppStatus: `{"state":"active","message":"db ready"}`, model.StateAppVersion: "1.0"}},
		{Unit: "db/1", Hash: hashOf(s, "db/1"), Seen: &model.Seen{Life: model.Alive},
			State: map[string]string{model.StateAppStatus: `{"state":"blocked","message":"a stale follower's"}`}},
	}
	if _, err := s.Apply(context.Background(), &model.Command{Op: model.OpResults, Results: results}); err != nil {
		t.Fatal(err)
	}
	st, err := NewController(s, Options{}).Status()
	if err != nil {
		t.Fatal(err)
	}
	db := st.Services["db"]
	if db.Leader != "db/0" || db.Status == nil || *db.Status != (model.Status{State: "active", Message: "db ready"}) || db.Version != "1.0" {
		t.Fatalf("db's service status: %+v (status %+v)", db, db.Status)
	}
	if web := st.Services["web"]; web.Status != nil || web.Version != "" {
		t.Fatalf("web set no application status, yet shows %+v", web.Status)
	}
}
