package main

import "github.com/fixpoint/fixpoint/charmapi"

// reconcile sets x to the negation of the remote unit's y ("0" when unset).
// With oscillate-b copying x into y, x would have to equal its own
// negation: the pair has no fixed point, and the engine must detect the
// divergence and name x and y as the keys that keep changing.
func reconcile(u *charmapi.Universe) (*charmapi.Result, error) {
	res := charmapi.NewResult()
	rels := u.RelationsNamed("flip")
	if len(rels) == 0 {
		return res.Blocked("needs a flip relation"), nil
	}
	for _, rel := range rels {
		y := "0"
		for _, s := range rel.Units {
			if s["y"] == "1" {
				y = "1"
			}
		}
		x := "1"
		if y == "1" {
			x = "0"
		}
		res.SetLocal(rel.Ident, map[string]string{"x": x})
		res.Active("x=" + x)
	}
	return res, nil
}
