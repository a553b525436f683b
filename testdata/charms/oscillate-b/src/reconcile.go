package main

import "github.com/fixpoint/fixpoint/charmapi"

// reconcile copies the remote unit's x into y ("0" when unset). See
// oscillate-a: together they never converge.
func reconcile(u *charmapi.Universe) (*charmapi.Result, error) {
	res := charmapi.NewResult()
	rels := u.RelationsNamed("flip")
	if len(rels) == 0 {
		return res.Blocked("needs a flip relation"), nil
	}
	for _, rel := range rels {
		x := "0"
		for _, s := range rel.Units {
			if s["x"] == "1" {
				x = "1"
			}
		}
		res.SetLocal(rel.Ident, map[string]string{"y": x})
		res.Active("y=" + x)
	}
	return res, nil
}
