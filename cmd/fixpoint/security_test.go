package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// call makes one raw API request and returns the status and body.
func call(t *testing.T, method, url, token string, body any) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

func TestAgentsSeeAndChangeOnlyTheirOwnUnits(t *testing.T) {
	data := t.TempDir()
	// The agents registered below never heartbeat: a long TTL keeps their
	// machines from going lost (a state change) during the test.
	up := startProc(t, "up", "-f", repo("testdata", "envs", "leader.cue"), "--data-dir", data, "--agent-ttl", "1h")
	eventually(t, "up serving", 2*time.Minute, func() (bool, string) { return statusOf(t, data) != nil, up.out.String() })
	base := readEndpoint(t, data)
	join := readFile(t, filepath.Join(data, joinTokenFile))
	operator := readFile(t, filepath.Join(data, operatorTokenFile))

	register := func(machine string) string {
		code, body := call(t, "POST", base+"/v1/agent/register", join, map[string]string{"machine": machine, "address": "127.0.0.1"})
		if code != 200 {
			t.Fatalf("register %s: %d %s", machine, code, body)
		}
		var reg struct{ Token string }
		_ = json.Unmarshal([]byte(body), &reg)
		return reg.Token
	}
	m1 := register("m1")
	register("m2")
	index := func() string {
		code, body := call(t, "GET", base+"/v1/state", operator, nil)
		if code != 200 {
			t.Fatalf("state: %d %s", code, body)
		}
		var st struct {
			Index    uint64 `json:"index"`
			EnvIndex uint64 `json:"env_index"`
			Units    map[string]struct {
				Reconciled string `json:"reconciled"`
				Resolved   any    `json:"resolved"`
			} `json:"units"`
		}
		_ = json.Unmarshal([]byte(body), &st)
		b, _ := json.Marshal(st)
		return string(b)
	}
	before := index()

	refused := []struct {
		what, method, path, token string
		body                      any
		code                      int
		says                      string
	}{
		{"read machine m2's work", "GET", "/v1/agent/work?machine=m2&wait=1ms", m1, nil, 403, "covers only the units on machine m1"},
		{"post m2's results", "POST", "/v1/agent/results?machine=m2", m1, []map[string]string{{"unit": "db/1", "hash": "x"}}, 403, "covers only the units on machine m1"},
		{"read a universe directly", "GET", "/v1/universe/db/1", m1, nil, 403, "agent of machine m1 may not"},
		{"change the environment", "POST", "/v1/deploy", m1, map[string]any{}, 403, "may not POST /v1/deploy"},
		{"mark a unit resolved", "POST", "/v1/resolved", m1, map[string]any{"unit": "db/0"}, 403, "may not POST /v1/resolved"},
		{"register another machine", "POST", "/v1/agent/register", m1, map[string]string{"machine": "m2", "address": "10.9.9.9"}, 403, "covers only its own machine"},
		{"use the join token for more than joining", "GET", "/v1/status", join, nil, 403, "a join token only registers machines"},
		{"read the state with no token", "GET", "/v1/state", "", nil, 401, "missing or unknown token"},
		{"read the state with a wrong token", "GET", "/v1/state", "not-a-token", nil, 401, "missing or unknown token"},
		{"change the environment with no token", "POST", "/v1/deploy", "", map[string]any{}, 401, "missing or unknown token"},
		{"drive raft with an agent token", "POST", "/v1/raft/snapshot", m1, map[string]any{}, 403, "may not"},
	}
	for _, r := range refused {
		code, body := call(t, r.method, base+r.path, r.token, r.body)
		if code != r.code || !strings.Contains(body, r.says) {
			t.Errorf("%s: got %d %s, want %d saying %q", r.what, code, strings.TrimSpace(body), r.code, r.says)
		}
		if strings.Contains(body, m1) || strings.Contains(body, join) {
			t.Errorf("%s: the answer leaks a token: %s", r.what, body)
		}
	}
	// Results for another machine's unit smuggled into m1's own batch are
	// not applied either.
	code, body := call(t, "POST", base+"/v1/agent/results?machine=m1", m1, []map[string]any{{"unit": "db/1", "hash": "x", "output": "e30="}})
	if code != 200 || !strings.Contains(body, "db/1") {
		t.Errorf("smuggled result: %d %s", code, body)
	}
	if after := index(); after != before {
		t.Fatalf("refused requests changed the state:\nbefore %s\nafter  %s", before, after)
	}
	if out := up.out.String(); strings.Contains(out, m1) || strings.Contains(out, join) || strings.Contains(out, operator) {
		t.Fatal("a token appears in the control plane's output")
	}
	// What is allowed still works: m1 claims its own work.
	if code, body := call(t, "GET", base+"/v1/agent/work?machine=m1&wait=1ms", m1, nil); code != 200 {
		t.Fatalf("m1 claiming its own work: %d %s", code, body)
	}
}
