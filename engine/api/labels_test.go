package api_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// TestRegisterKeepsTheMachinesLabels: a registration's labels reach the
// machine once the cluster's level keeps them, a renewal replaces them,
// and malformed ones are refused with 400 before anything is proposed.
func TestRegisterKeepsTheMachinesLabels(t *testing.T) {
	n := startNode(t, "n1")
	recording(t, n)
	labelsOf := func(want string) {
		t.Helper()
		rafttest.Eventually(t, time.Minute, "m1's labels are "+want, func() error {
			return n.store.View(func(st *model.State) error {
				m := st.Machines["m1"]
				if m == nil {
					return errors.New("m1 not registered")
				}
				var kv []string
				for _, k := range []string{"disk", "zone"} {
					if v, ok := m.Labels[k]; ok {
						kv = append(kv, k+"="+v)
					}
				}
				if got := strings.Join(kv, ","); got != want || len(m.Labels) != len(kv) {
					return errors.New("labels " + got)
				}
				return nil
			})
		})
	}
	code, e, body := call(t, "POST", n.addr+"/v1/agent/register", joinToken, mustJSON(t, api.Register{Machine: "m1", Address: "10.0.0.1", Labels: map[string]string{"zone": "a", "disk": "ssd"}}))
	var reg api.Registered
	if code != http.StatusOK || json.Unmarshal(body, &reg) != nil {
		t.Fatalf("register m1: %d %v %s", code, e, body)
	}
	labelsOf("disk=ssd,zone=a")
	if code, e, _ := call(t, "POST", n.addr+"/v1/agent/register", reg.Token, mustJSON(t, api.Register{Machine: "m1", Address: "10.0.0.1", Labels: map[string]string{"zone": "b"}})); code != http.StatusOK {
		t.Fatalf("renew m1 with other labels: %d %v", code, e)
	}
	labelsOf("zone=b")
	code, e, _ = call(t, "POST", n.addr+"/v1/agent/register", reg.Token, mustJSON(t, api.Register{Machine: "m1", Address: "10.0.0.1", Labels: map[string]string{"zone": "b c"}}))
	if code != http.StatusBadRequest || e == nil || !strings.Contains(e.Error(), "--label") {
		t.Fatalf("malformed label: %d %v; want 400 naming --label", code, e)
	}
	labelsOf("zone=b")
}
