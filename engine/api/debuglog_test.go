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

// An agent posts lines of its machine and its units only; what it posts
// is scrubbed of the secrets its units see before it is kept; the
// operator reads it back filtered, and follows it; the events of the
// run the fixture reported are there too.
func TestDebugLogPostScrubAndRead(t *testing.T) {
	n := startNode(t, "n1")
	agent, _ := deploySecrets(t, n)
	ctx := ctxT(t)
	now := time.Now().UnixNano()
	line := func(unit, machine, msg string) model.LogLine {
		return model.LogLine{Time: now, Unit: unit, Machine: machine, Level: "info", Origin: model.OriginHook, Message: msg}
	}
	if err := agent.ShipLogs(ctx, "m1", []model.LogLine{
		line("db/0", "m1", "connecting with "+secretPassword),
		line("web/0", "m1", "web says hello"),
		line("", "m1", "agent line naming "+secretSeed),
	}); err != nil {
		t.Fatal(err)
	}
	for name, lines := range map[string][]model.LogLine{
		"another machine's line": {line("", "m2", "x")},
		"a unit of no machine":   {line("db/0", "", "x")},
		"a node's line":          {{Time: now, Node: "n1", Level: "info", Origin: model.OriginNode, Message: "x"}},
		"a bad level":            {{Time: now, Machine: "m1", Level: "loud", Origin: model.OriginAgent, Message: "x"}},
	} {
		if err := agent.ShipLogs(ctx, "m1", lines); err == nil || !errors.Is(err, api.ErrBadRequest) && !strings.Contains(err.Error(), "400") {
			t.Errorf("%s: posted (%v)", name, err)
		}
	}
	// Another machine's credential does not cover m1.
	body, _ := json.Marshal(model.LogBatch{Lines: []model.LogLine{line("", "m1", "x")}})
	if code, _, _ := call(t, "POST", n.addr+"/v1/agent/logs?machine=m2", joinToken, body); code != http.StatusForbidden {
		t.Errorf("the join token posted log lines: %d", code)
	}
	op := api.NewClient([]string{n.addr}, operatorToken, nil)
	all, err := op.DebugLog(ctx, api.DebugLogQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, l := range all.Lines {
		msgs = append(msgs, l.Message)
	}
	raw := strings.Join(msgs, "\n")
	for _, s := range []string{secretPassword, secretSeed} {
		if strings.Contains(raw, s) {
			t.Errorf("the debug log keeps the secret %s: %s", s, raw)
		}
		if !strings.Contains(raw, model.Redact(s)) {
			t.Errorf("the debug log lacks the redaction of %s: %s", s, raw)
		}
	}
	src := func(q api.DebugLogQuery) string {
		page, err := op.DebugLog(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range page.Lines {
			out = append(out, l.Source())
		}
		return strings.Join(out, ",")
	}
	if got := src(api.DebugLogQuery{Filter: model.LogFilter{Include: []string{"db"}}}); got != "db/0" {
		t.Errorf("include db: %s", got)
	}
	if got := src(api.DebugLogQuery{Filter: model.LogFilter{Include: []string{"m1"}, Exclude: []string{"web/0"}}}); got != "db/0,machine m1" {
		t.Errorf("include m1 exclude web/0: %s", got)
	}
	if got := src(api.DebugLogQuery{Tail: 1}); got != "machine m1" {
		t.Errorf("tail 1: %s", got)
	}
	if code, _, _ := call(t, "GET", n.addr+"/v1/debug-log?level=loud", operatorToken, nil); code != http.StatusBadRequest {
		t.Errorf("a bad level answered %d", code)
	}
	if code, _, _ := call(t, "GET", n.addr+"/v1/debug-log", joinToken, nil); code != http.StatusForbidden {
		t.Errorf("the join token read the debug log: %d", code)
	}
	// A follow waits for the next line and gets it.
	got := make(chan *api.DebugLog, 1)
	go func() {
		page, _ := op.DebugLog(ctx, api.DebugLogQuery{After: all.Last, Wait: 30 * time.Second})
		got <- page
	}()
	if err := agent.ShipLogs(ctx, "m1", []model.LogLine{line("web/0", "m1", "later")}); err != nil {
		t.Fatal(err)
	}
	if page := <-got; page == nil || len(page.Lines) != 1 || page.Lines[0].Message != "later" {
		t.Fatalf("follow got %+v", page)
	}
	// The fixture's run of db/0 is an event of db/0.
	rafttest.Eventually(t, time.Minute, "db/0's run among its events", func() error {
		evs, err := op.Events(ctx, "db/0", 0, 0, 0)
		if err != nil {
			return err
		}
		for _, e := range evs.Events {
			if e.Unit == "db/0" && e.Kind == model.EventSucceeded {
				return nil
			}
		}
		return errors.New("no succeeded event of db/0 yet")
	})
	if code, _, _ := call(t, "GET", n.addr+"/v1/events?of=no%20such", operatorToken, nil); code != http.StatusBadRequest {
		t.Errorf("events of a bad name answered %d", code)
	}
}
