package api

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// TestAgentsCannotRecordSecretsDue: the secret-due entry comes from the
// leader's engine, or the operator's credential; an agent's or a join
// token's request to propose any command is refused before it is read.
func TestAgentsCannotRecordSecretsDue(t *testing.T) {
	body := `{"op":"secret-due","time":1,"secret_due":{"rotate":["cn0gqa6qs7s1bm0kfp8g"]}}`
	for _, p := range []principal{{role: roleAgent, machine: "m1"}, {role: roleJoin}} {
		r := httptest.NewRequest("POST", "/v1/raft/apply?machine=m1", strings.NewReader(body))
		if why := allowed(p, r); why == "" {
			t.Errorf("%s may propose a secret-due entry", p)
		}
	}
	r := httptest.NewRequest("POST", "/v1/raft/apply", strings.NewReader(body))
	if why := allowed(principal{role: roleOperator}, r); why != "" {
		t.Errorf("the operator may not propose: %s", why)
	}
}
