package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/engine/memgov"
	"github.com/fixpoint/fixpoint/model"
)

// TestMemoryPressureSlowsIntake: a node whose governor reads (injected)
// memory over its limit takes agents' intake at its pace, turning away
// (503, Retry-After) a post whose turn is too far off, while heartbeats
// and operators' reads are served; its status and metrics say so; once
// the reading falls, intake is served again and the warning is gone.
func TestMemoryPressureSlowsIntake(t *testing.T) {
	var used atomic.Uint64
	used.Store(100 << 20)
	gov := memgov.New(memgov.Limit{Bytes: 1 << 30, Source: memgov.SourceFlag}, used.Load)
	// One request per hour, none held: the second under pressure is
	// turned away at once, with no timing to wait on.
	gov.SetPace(time.Hour, 0)
	gov.Sample()
	n := startNodeMem(t, "n1", gov)
	ctx := ctxT(t)

	agent := api.NewClient([]string{n.addr}, joinToken, nil)
	var cred string
	agent.UseCredential("", func(tok string) error { cred = tok; return nil })
	if err := agent.Register(ctx, "m1", "10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	logs := func() (int, http.Header) {
		body, _ := json.Marshal(model.LogBatch{Lines: []model.LogLine{{Time: time.Now().UnixNano(), Machine: "m1", Level: "info", Origin: model.OriginAgent, Message: "hello"}}})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, n.addr+"/v1/agent/logs?machine=m1", strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer "+cred)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Header
	}
	warning := func() string {
		code, e, body := call(t, http.MethodGet, n.addr+"/v1/status", operatorToken, nil)
		if code != http.StatusOK {
			t.Fatalf("status under pressure: %d %v", code, e)
		}
		var st struct {
			Cluster *model.ClusterLevel `json:"cluster"`
		}
		if err := json.Unmarshal(body, &st); err != nil || st.Cluster == nil {
			t.Fatalf("status: %v %s", err, body)
		}
		for _, w := range st.Cluster.Warnings {
			if strings.Contains(w, "memory pressure") {
				return w
			}
		}
		return ""
	}
	metric := func(name string) string {
		_, _, body := call(t, http.MethodGet, n.addr+"/metrics", operatorToken, nil)
		for _, line := range strings.Split(string(body), "\n") {
			if strings.HasPrefix(line, name) {
				return line
			}
		}
		return ""
	}

	if code, _ := logs(); code != http.StatusOK {
		t.Fatalf("a log post without pressure: %d", code)
	}
	if w := warning(); w != "" {
		t.Fatalf("a warning without pressure: %s", w)
	}

	used.Store(1000 << 20) // over 90% of 1 GiB
	if !gov.Sample() {
		t.Fatal("no pressure at 1000 MiB of 1 GiB")
	}
	if code, _ := logs(); code != http.StatusOK {
		t.Fatalf("the first post under pressure takes the first turn: %d", code)
	}
	code, hdr := logs()
	if code != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" {
		t.Fatalf("a post whose turn is an hour off: %d, Retry-After %q; want 503 with Retry-After", code, hdr.Get("Retry-After"))
	}
	if _, err := agent.Heartbeat(ctx, "m1", nil); err != nil {
		t.Fatalf("a heartbeat under pressure: %v", err)
	}
	if w := warning(); !strings.Contains(w, "node n1 is under memory pressure") || !strings.Contains(w, "--memory-limit") {
		t.Fatalf("status under pressure warns %q", w)
	}
	if m := metric("fixpoint_memory_pressure "); m != "fixpoint_memory_pressure 1" {
		t.Errorf("metrics under pressure: %q", m)
	}
	if m := metric("fixpoint_intake_refused_total "); m != "fixpoint_intake_refused_total 1" {
		t.Errorf("metrics under pressure: %q", m)
	}
	if m := metric("fixpoint_memory_limit_bytes"); !strings.Contains(m, `source="--memory-limit"`) {
		t.Errorf("metrics: %q", m)
	}

	used.Store(500 << 20)
	if gov.Sample() {
		t.Fatal("pressure at 500 MiB of 1 GiB")
	}
	for range 3 {
		if code, _ := logs(); code != http.StatusOK {
			t.Fatalf("a log post once recovered: %d", code)
		}
	}
	if w := warning(); w != "" {
		t.Fatalf("a warning once recovered: %s", w)
	}
	if m := metric("fixpoint_memory_pressure "); m != "fixpoint_memory_pressure 0" {
		t.Errorf("metrics once recovered: %q", m)
	}
}
