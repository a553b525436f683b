package engine

import (
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// FuzzDecodeResult feeds hook output, untrusted, to the engine's decoder:
// nothing panics, and whatever it accepts the FSM's own validation accepts
// too, so a decoded result can never be refused later, after the run.
func FuzzDecodeResult(f *testing.F) {
	for _, seed := range []string{
		`{}`,
		`{"relations": {"db:7": {"local": {"host": "10.0.0.1"}, "app": {"k": "v"}}}, "leader_data": {"k": "v"}, "status": {"state": "active", "message": "ready"}, "state": {"x": "1"}, "ports": ["80/tcp", "icmp", "8000-8080/udp"]}`,
		`{"ports": ["0/tcp", "99999/tcp", "90-80/tcp"]}`,
		`{"status": {"state": "happy"}}`,
		`{"state": {"": "x"}}`,
		`{"relations": {"db:9": {"local": {}}}}`,
		`{"a": 1} {"b": 2}`,
		`null`,
	} {
		f.Add([]byte(seed))
	}
	uni := &charmapi.Universe{API: charmapi.API, Unit: "web/0", Service: "web", Leader: true,
		Relations: []charmapi.Relation{{Ident: "db:7", ID: 7, Name: "db"}}}
	f.Fuzz(func(t *testing.T, out []byte) {
		res, err := DecodeResult(uni, out)
		if err != nil {
			return
		}
		res.Hash = "h"
		cmd := &model.Command{Op: model.OpResults, Results: []model.Result{*res}}
		if err := cmd.Validate(); err != nil {
			t.Fatalf("the decoder accepted %q, the FSM would refuse it: %v", out, err)
		}
	})
}
