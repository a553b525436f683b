package charmtest_test

import (
	"context"
	"fmt"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/charmapi/charmtest"
	"github.com/fixpoint/fixpoint/model"
)

// A unit test builds the universe a db unit would see, runs its reconcile
// function and checks what it writes; in a test, charmtest.Run(t, ...)
// does what Try does, runs the hook a second time to check it returns the
// same, and fails t with what is wrong.
func ExampleTry() {
	reconcile := func(u *charmapi.Universe) (*charmapi.Result, error) {
		res := charmapi.NewResult()
		for _, rel := range u.RelationsNamed("db") {
			res.Local(rel.Ident).Set("allowed-units", charmapi.JoinUnits(rel.MembersWith("database")))
		}
		return res.Active("serving"), nil
	}
	b := charmtest.NewUniverse("db/0").Leader()
	b.Provides("db", "web").Unit("web/10", "database", "shop").Unit("web/2", "database", "shop").Units("web/3")

	res, err := charmtest.Try(context.Background(), charmtest.Func(reconcile), b.Universe(), "")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Local("db:0")["allowed-units"])
	fmt.Println(res.Status)
	// Output:
	// web/2 web/10
	// active: serving
}

// A simulation: a pair of charms where a sets x to the negation of b's y
// and b copies x into y. No schedule converges, and the report names the
// keys that keep changing and who writes them.
func ExampleEnv_Simulate() {
	flip := func(read, write string, negate bool) charmtest.ReconcileFunc {
		return func(u *charmapi.Universe) (*charmapi.Result, error) {
			rel := u.Relation("flip")
			v := rel.Get(rel.Members()[0], read) == "1"
			if negate {
				v = !v
			}
			res := charmapi.NewResult()
			res.Local(rel.Ident).Set(write, map[bool]string{true: "1", false: "0"}[v])
			return res, nil
		}
	}
	env := charmtest.NewEnv("flip")
	env.DeployMeta("a", model.CharmMeta{Name: "a", Provides: map[string]model.Endpoint{"flip": {Interface: "flip"}}})
	env.DeployMeta("b", model.CharmMeta{Name: "b", Requires: map[string]model.Endpoint{"flip": {Interface: "flip"}}})
	env.Relate("a", "b")
	env.Hook("a", charmtest.Func(flip("y", "x", true)))
	env.Hook("b", charmtest.Func(flip("x", "y", false)))

	rep, err := env.Simulate(context.Background(), charmtest.SimOptions{Schedules: 5, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("converged:", rep.Converged(), "of", len(rep.Schedules))
	for _, k := range rep.Schedules[0].Cycle.Keys {
		fmt.Printf("%s, written by %s\n", k.Key, k.Writer)
	}
	// Output:
	// converged: 0 of 5
	// a/0 relations.flip:0.local.x, written by a/0
	// b/0 relations.flip:0.local.y, written by b/0
}
