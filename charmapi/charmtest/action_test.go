package charmtest_test

import (
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/charmapi/charmtest"
)

// backup is a reconcile charm's action handler: it reads its params,
// logs, sets nested results, writes its status and its peer data, and
// fails on request.
func backup(u *charmapi.Universe, a *charmapi.Action) (*charmapi.Result, error) {
	dest, _ := a.Params["dest"].(string)
	a.Log("backing up to %s", dest)
	if dest == "" {
		a.Fail("no destination")
		return nil, nil
	}
	if err := a.Set("backup.dest", dest); err != nil {
		return nil, err
	}
	if err := a.Set("backup.unit", u.Unit); err != nil {
		return nil, err
	}
	res := &charmapi.Result{}
	res.Local("cluster:0").Set("backup", dest)
	return res.Activef("backed up to %s", dest), nil
}

func TestRunAction(t *testing.T) {
	u := charmtest.NewUniverse("db/0").Peer("cluster").ID(0).Units("db/1").Universe()
	r := charmtest.RunAction(t, backup, u, "backup", map[string]any{"dest": "/srv"})
	if r.Failed || r.Results["backup"].(map[string]any)["dest"] != "/srv" || len(r.Log) != 1 || r.Log[0].Message != "backing up to /srv" {
		t.Fatalf("backup: %+v", r.ActionOutput)
	}
	r.Writes.ExpectStatus("active", "backed up to /srv").ExpectLocal("cluster:0", map[string]string{"backup": "/srv"})

	r = charmtest.RunAction(t, backup, u, "backup", nil)
	if !r.Failed || r.Message != "no destination" {
		t.Fatalf("backup without dest: %+v", r.ActionOutput)
	}
	a := &charmapi.Action{}
	if err := a.Set("Bad.key", 1); err == nil {
		t.Error("Set took a key Juju refuses")
	}
}
