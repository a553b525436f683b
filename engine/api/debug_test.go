package api_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

// The leader tells when it applied an entry, between the proposal and
// the answer; an index it does not know, or none, is refused.
func TestAppliedAt(t *testing.T) {
	n := startNode(t, "n1")
	before := time.Now()
	resp, err := n.store.Apply(ctxT(t), &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: "m1", Address: "10.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	code, e, body := call(t, "GET", n.addr+"/v1/debug/applied?index="+strconv.FormatUint(resp.Index, 10), operatorToken, nil)
	if code != http.StatusOK {
		t.Fatalf("applied at %d: %d %v", resp.Index, code, e)
	}
	var a api.Applied
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatal(err)
	}
	if a.Index != resp.Index || a.AppliedAt.Before(before) || a.AppliedAt.After(after) {
		t.Errorf("entry %d applied at %s, want entry %d between %s and %s", a.Index, a.AppliedAt, resp.Index, before, after)
	}
	for _, q := range []string{"index=0", "index=x", "", "index=" + strconv.FormatUint(resp.Index+1000, 10)} {
		if code, _, _ := call(t, "GET", n.addr+"/v1/debug/applied?"+q, operatorToken, nil); code/100 != 4 {
			t.Errorf("?%s: %d, want a refusal", q, code)
		}
	}
}
