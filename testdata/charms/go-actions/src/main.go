// Command reconcile is the go-actions test charm: a reconcile function
// and a greet action handler.
package main

import (
	"fmt"

	"github.com/fixpoint/fixpoint/charmapi"
)

func main() {
	charmapi.MainWithActions(reconcile, map[string]charmapi.ActionFunc{"greet": greet})
}

// reconcile keeps the unit active, and the greeting an action left in its
// private state in its status.
func reconcile(u *charmapi.Universe) (*charmapi.Result, error) {
	res := charmapi.NewResult()
	if g := u.State["greeting"]; g != "" {
		return res.Active(g), nil
	}
	return res.Active("ready"), nil
}

// greet reads its params, logs, sets nested results, and writes its peer
// data, private state and status; a name of "fail" fails it.
func greet(u *charmapi.Universe, a *charmapi.Action) (*charmapi.Result, error) {
	name, _ := a.Params["name"].(string)
	times, _ := a.Params["times"].(float64)
	a.Log("greeting %s %d times", name, int(times))
	if name == "fail" {
		a.Fail("asked to fail")
		return nil, nil
	}
	text := fmt.Sprintf("hello %s", name)
	if err := a.Set("greeting.text", text); err != nil {
		return nil, err
	}
	if err := a.Set("greeting.times", int(times)); err != nil {
		return nil, err
	}
	res := charmapi.NewResult()
	if peers := u.Relation("cluster"); peers != nil {
		res.Local(peers.Ident).Set("greeted", name)
	}
	res.State = map[string]string{"greeting": text}
	return res.Active(text), nil
}
