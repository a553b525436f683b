package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine"
)

func TestWorkMax(t *testing.T) {
	for in, want := range map[string]int{"": MaxWork, "0": MaxWork, "3": 3, "100000": MaxWork} {
		if got, err := workMax(in); err != nil || got != want {
			t.Errorf("workMax(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"-1", "two"} {
		if _, err := workMax(in); err == nil {
			t.Errorf("workMax(%q) took it", in)
		}
	}
}

// writeWork streams the batch one unit at a time; what it writes must
// read back as the same array, empty batches included.
func TestWriteWorkReadsBack(t *testing.T) {
	for _, work := range [][]engine.Work{nil, {
		{Unit: "db/0", Hash: "h0", Universe: &charmapi.Universe{Unit: "db/0", Relations: []charmapi.Relation{{Ident: "db:1", Units: map[string]map[string]string{"web/0": {"database": "shop"}}}}}},
		{Unit: "db/1", Hash: "h1", Universe: &charmapi.Universe{Unit: "db/1"}},
	}} {
		rec := httptest.NewRecorder()
		writeWork(rec, work)
		var got []engine.Work
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatalf("%q: %v", rec.Body.String(), err)
		}
		if got == nil || len(got) != len(work) {
			t.Fatalf("wrote %d units, read back %v", len(work), got)
		}
		for i := range work {
			if got[i].Unit != work[i].Unit || got[i].Hash != work[i].Hash || got[i].Universe.Unit != work[i].Universe.Unit {
				t.Errorf("unit %d: wrote %+v, read back %+v", i, work[i], got[i])
			}
		}
		if len(work) > 0 && got[0].Universe.Relations[0].Units["web/0"]["database"] != "shop" {
			t.Errorf("settings lost: %+v", got[0].Universe)
		}
	}
}

// Claim hands back each universe both decoded and as the bytes sent; a
// unit without one is refused, not handed to the agent to crash on.
func TestClaimKeepsTheUniverseAsSent(t *testing.T) {
	answer := `[{"unit": "db/0", "hash": "h0", "universe": {"unit": "db/0",  "service": "db"}}]`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(answer))
	}))
	defer srv.Close()
	c := NewClient([]string{srv.URL}, "token", nil)
	work, err := c.Claim(context.Background(), "m1", 1, time.Second)
	if err != nil || len(work) != 1 {
		t.Fatalf("claim = %+v, %v", work, err)
	}
	if string(work[0].UniverseJSON) != `{"unit": "db/0",  "service": "db"}` || work[0].Universe.Service != "db" || work[0].Hash != "h0" {
		t.Errorf("work %+v, universe %s", work[0], work[0].UniverseJSON)
	}
	answer = `[{"unit": "db/0", "hash": "h0"}]`
	if work, err := c.Claim(context.Background(), "m1", 1, time.Second); err == nil {
		t.Errorf("a unit without its universe was handed back: %+v", work)
	}
}
