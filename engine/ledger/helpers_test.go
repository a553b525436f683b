package ledger

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// world is a replicated state the tests change as the FSM would, each
// command encoded and decoded as it is in the log.
type world struct {
	t  testing.TB
	st *model.State
	// journal is the state's, as the FSM keeps it (changes).
	journal *model.Journal
}

func newWorld(t testing.TB) *world {
	return &world{t: t, st: model.NewState(), journal: model.NewJournal(0)}
}

// changes is the world's journal, for Options.Changes.
func (w *world) changes(since uint64) ([]model.Touched, bool) { return w.journal.ChangesSince(since) }

func (w *world) apply(c *model.Command) *model.Response {
	w.t.Helper()
	data, err := json.Marshal(c)
	if err != nil {
		w.t.Fatal(err)
	}
	var dc model.Command
	if err := json.Unmarshal(data, &dc); err != nil {
		w.t.Fatal(err)
	}
	resp, err := w.st.Apply(w.st.Index+1, &dc)
	if err != nil {
		w.t.Fatalf("apply %s: %v", c.Op, err)
	}
	w.journal.Record(resp.Touched(""))
	return resp
}

func intp(n int) *int { return &n }

// shop deploys db (provides kv, peers) and web (requires kv) on machine m.
func (w *world) shop(dbUnits, webUnits int) {
	charms := map[string]*model.Charm{
		"h-db":  {Hash: "h-db", Meta: model.CharmMeta{Name: "db", Provides: map[string]model.Endpoint{"db": {Interface: "kv"}}, Peers: map[string]model.Endpoint{"cluster": {Interface: "c"}}}},
		"h-web": {Hash: "h-web", Meta: model.CharmMeta{Name: "web", Requires: map[string]model.Endpoint{"db": {Interface: "kv"}}}},
	}
	env := model.Environment{APIVersion: model.APIVersion, Name: "shop",
		Services:  map[string]model.ServiceSpec{"db": {CharmHash: "h-db", Units: intp(dbUnits)}, "web": {CharmHash: "h-web", Units: intp(webUnits)}},
		Relations: map[string][]string{"web-db": {"web:db", "db:db"}}}
	w.apply(&model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: "m", Address: "10.0.0.9"}})
	w.apply(&model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}})
}

// stand-in universes: the ledger only hands universes on, and compares
// hashes. A unit's universe names it and its charm; its hash is the
// state's index when it was built, so a view rebuilt after any entry
// has a hash its unit has not reconciled yet.
func standInBuild(st *model.State, unit string) (*charmapi.Universe, *model.Seen) {
	u := st.Units[unit]
	if u == nil {
		return nil, nil
	}
	return &charmapi.Universe{Unit: unit, Charm: st.Services[u.Service].Charm}, &model.Seen{Life: model.Alive}
}

func standInBuildHashed(st *model.State, unit string) (*charmapi.Universe, *model.Seen, string, int) {
	uni, seen := standInBuild(st, unit)
	h := fmt.Sprintf("%s@%d", unit, st.Index)
	return uni, seen, h, len(h)
}

func standInResult(uni *charmapi.Universe, hash string, seen *model.Seen, _ []byte, hookErr string, _ *charmapi.Universe) *model.Result {
	return &model.Result{Unit: uni.Unit, Hash: hash, Seen: seen, Error: hookErr}
}

var standIn = Builder{Build: standInBuild, BuildHashed: standInBuildHashed, Result: standInResult}
