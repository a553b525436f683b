package main

import (
	"strconv"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
)

// reconcile publishes the current time in its peer settings ("now") on
// every run. Each write changes every peer's universe, so with two or more
// units the peers wake each other forever: the engine must stop them after
// its reconcile bound and name "now" as the key that keeps changing.
func reconcile(u *charmapi.Universe) (*charmapi.Result, error) {
	res := charmapi.NewResult()
	ring := u.Relation("ring")
	if ring == nil {
		return res.Waiting("waiting for the ring peer relation"), nil
	}
	res.SetLocal(ring.Ident, map[string]string{"now": strconv.FormatInt(time.Now().UnixNano(), 10)})
	n := len(ring.Units)
	if n == 1 {
		return res.Active("ticking with 1 peer"), nil
	}
	return res.Active("ticking with " + strconv.Itoa(n) + " peers"), nil
}
