package engine

import (
	"context"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// TestAddressChangeRunsConfigChanged moves the machine's address after the
// fixed point: every unit on it is stale again, and an old-hook charm gets
// config-changed, as in Juju.
func TestAddressChangeRunsConfigChanged(t *testing.T) {
	s := newMemStore()
	shop(t, s, 1, 1)
	active := func(u *charmapi.Universe) *charmapi.Result { return charmapi.NewResult().Active("") }
	runAll(t, s, map[string]func(*charmapi.Universe) *charmapi.Result{"db": active, "web": active})
	if _, err := s.Apply(context.Background(), &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: "m", Address: "10.0.0.77"}}); err != nil {
		t.Fatal(err)
	}
	ctl := NewController(s, Options{})
	u, err := ctl.Universe("web/0")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range u.Events {
		got = append(got, e.String())
	}
	if u.Address != "10.0.0.77" || len(got) == 0 || got[0] != "config-changed" {
		t.Errorf("after the address moved: address %s, events %v; want config-changed first", u.Address, got)
	}
}
