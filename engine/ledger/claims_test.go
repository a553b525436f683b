package ledger

import (
	"reflect"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/schedule"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// TestAClaimHoldsTheUniverseHandedOut: a unit whose universe a pass built
// ahead is handed out with that universe and its encoding, and its claim
// holds the universe handed out but for its events and its relations'
// members: the report is checked against it, and those, the agent's
// alone, are not kept.
func TestAClaimHoldsTheUniverseHandedOut(t *testing.T) {
	w := newWorld(t)
	w.shop(1, 1)
	var reported *charmapi.Universe
	build := standIn
	build.Result = func(uni *charmapi.Universe, hash string, seen *model.Seen, out []byte, hookErr string, last *charmapi.Universe) *model.Result {
		reported = uni
		return standInResult(uni, hash, seen, out, hookErr, last)
	}
	l := New(Options{Backoff: schedule.DefaultBackoff, Lease: time.Minute, Now: time.Now, Changes: w.changes}, build)
	l.Refresh(w.st).Done()

	// The build-ahead is the pass's: a claim takes what it hands out.
	ahead, encoded := map[string]*Prebuilt{}, map[string]string{}
	for _, name := range []string{"db/0", "web/0"} {
		uni, seen := standInBuild(w.st, name)
		v := l.Views().View(name)
		encoded[name] = `{"unit":"` + name + `"}`
		run := *uni
		run.Events = []charmapi.Event{{Hook: "install"}, {Hook: "start"}}
		ahead[name] = &Prebuilt{Uni: uni, Seen: seen, Hash: v.Hash, Run: run, RunJSON: []byte(encoded[name])}
	}
	var work []wire.Work
	l.ClaimEach(w.st, NewBuiltAhead(ahead), func(claim func(string, int) ([]wire.Work, time.Time)) {
		work, _ = claim("m", 0)
	}).Done()
	if len(work) == 0 {
		t.Fatal("nothing handed out of a fresh environment")
	}
	for _, wk := range work {
		if string(wk.UniverseJSON) != encoded[wk.Unit] {
			t.Fatalf("%s handed out with %q; want the encoding built ahead", wk.Unit, wk.UniverseJSON)
		}
		results, stale, owed := l.Accept("m", []wire.Report{{Unit: wk.Unit, Hash: wk.Hash}}, time.Now())
		owed.Done()
		if len(wk.Universe.Events) != 2 {
			t.Fatalf("%s handed out with events %v; want the two built ahead", wk.Unit, wk.Universe.Events)
		}
		want := *wk.Universe
		want.Events = nil
		want.Relations = nil
		for _, r := range wk.Universe.Relations {
			r.Units = nil
			want.Relations = append(want.Relations, r)
		}
		if len(results) != 1 || len(stale) != 0 || reported == nil || !reflect.DeepEqual(*reported, want) {
			t.Fatalf("the report of %s: %d results, stale %v; checked against %+v, want the universe handed out without its events %+v", wk.Unit, len(results), stale, reported, want)
		}
	}
	if c := l.Counts(); c.Prebuilt != int64(len(work)) {
		t.Fatalf("%d universes taken from the build-ahead; want %d", c.Prebuilt, len(work))
	}
}
