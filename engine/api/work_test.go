package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/wire"
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

// writeWork writes a small batch in one piece with its length and
// streams a large one; what it writes must read back as the same array,
// empty batches included.
func TestWriteWorkReadsBack(t *testing.T) {
	big := make([]wire.Work, 40)
	for i := range big {
		units := map[string]map[string]string{"web/0": {"database": "shop"}}
		for j := range 50 {
			units[fmt.Sprintf("web/%d", j+1)] = map[string]string{"blob": strings.Repeat("x", 100)}
		}
		name := fmt.Sprintf("db/%d", i)
		big[i] = wire.Work{Unit: name, Hash: "h", Universe: &charmapi.Universe{Unit: name, Relations: []charmapi.Relation{{Ident: "db:1", Units: units}}}}
	}
	for _, work := range [][]wire.Work{nil, {
		{Unit: "db/0", Hash: "h0", Universe: &charmapi.Universe{Unit: "db/0", Relations: []charmapi.Relation{{Ident: "db:1", Units: map[string]map[string]string{"web/0": {"database": "shop"}}}}}},
		{Unit: "db/1", Hash: "h1", Universe: &charmapi.Universe{Unit: "db/1"}},
	}, big} {
		rec := httptest.NewRecorder()
		writeWork(rec, work)
		length := rec.Header().Get("Content-Length")
		switch small := rec.Body.Len() < workFlush; {
		case small && length != strconv.Itoa(rec.Body.Len()):
			t.Errorf("%d units, %d bytes: Content-Length %q", len(work), rec.Body.Len(), length)
		case !small && length != "":
			t.Errorf("%d units, %d bytes streamed with Content-Length %q", len(work), rec.Body.Len(), length)
		}
		var got []wire.Work
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
