package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// waitForLock waits until the up started on data holds its lock, so
// that what follows tests the running up rather than the race to start.
func waitForLock(t *testing.T, p *upProc) {
	t.Helper()
	rafttest.Until(t, time.Minute, "up holding its lock", func() bool {
		if p.exited() {
			t.Fatalf("up exited:\n%s", p.out)
		}
		return upRunning(p.data)
	})
}

// TestOperatorUXAgainstRunningUp walks issue 17's items against one
// running up of the demo: wait right after start, the lock, relations,
// config, show-unit, debug universe on a service, tokens, plan's rename
// warning, and what is said once up is gone.
func TestOperatorUXAgainstRunningUp(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	p := startUp(t, data, demoEnv)
	waitForLock(t, p)

	// wait right after up starts waits for the environment up was given:
	// it never ends on an empty "converged".
	r := fixpoint(t, 4*time.Minute, "wait", "--data-dir", data, "--timeout", "3m")
	if r.code != 0 || !strings.Contains(r.stdout, "converged at index") {
		t.Fatalf("wait exited %d\n%s\n%s\nup:\n%s", r.code, r.stdout, r.stderr, p.out)
	}
	st := statusJSON(t, data)
	if !st.Converged || st.Applying || len(st.Units) != 4 {
		t.Fatalf("after wait: converged=%v applying=%v units=%d", st.Converged, st.Applying, len(st.Units))
	}
	for n, u := range st.Units {
		if u.Since.IsZero() {
			t.Errorf("%s has no since", n)
		}
	}
	// Not a terminal: the URL without the token, and where the token is.
	if !strings.Contains(p.out.String(), "/ui/ (it asks for the token in "+filepath.Join(data, operatorTokenFile)+")") || strings.Contains(p.out.String(), "#token=") {
		t.Errorf("up did not print the dashboard URL (without its token, off a terminal):\n%s", p.out)
	}
	if strings.Contains(p.out.String(), "[WARN]") {
		t.Errorf("a normal start logged a warning:\n%s", p.out)
	}

	t.Run("second up refuses and leaves the running one alone", func(t *testing.T) {
		r := fixpoint(t, time.Minute, "up", "-f", repo("testdata", "demo", "env.cue"), "--data-dir", data, "--until-converged")
		if r.code != exitFailed || !strings.Contains(r.stderr, "is in use: another fixpoint up runs on it") {
			t.Fatalf("second up: %d\n%s", r.code, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(data, endpointFile)); err != nil {
			t.Fatalf("second up removed %s: %v", endpointFile, err)
		}
		statusJSON(t, data)
	})

	t.Run("relations", func(t *testing.T) {
		var rels []*engine.RelationStatus
		for _, r := range st.Relations {
			if strings.Join(r.Endpoints, " ") == "db:db web:db" || strings.Join(r.Endpoints, " ") == "web:db db:db" {
				rels = append(rels, r)
			}
		}
		if len(st.Relations) != 3 || len(rels) != 1 || rels[0].Interface == "" || rels[0].Scope != "global" || strings.Join(rels[0].Members, ",") == "" {
			t.Fatalf("relations in status JSON: %s", mustJSON(st.Relations))
		}
		if got := strings.Join(rels[0].Members, ","); !strings.Contains(got, "db/0") || !strings.Contains(got, "web/1") {
			t.Errorf("members of web-db: %s", got)
		}
		r := fixpoint(t, time.Minute, "status", "--relations", "--data-dir", data)
		if r.code != 0 || !strings.Contains(r.stdout, "RELATION") || !strings.Contains(r.stdout, "db:cluster (peer)") || !strings.Contains(r.stdout, "SINCE") {
			t.Errorf("status --relations: %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		r = fixpoint(t, time.Minute, "status", "-o", "yaml", "--data-dir", data)
		if r.code != 0 || !strings.Contains(r.stdout, "relations:\n") || !strings.Contains(r.stdout, "members:") {
			t.Errorf("status -o yaml: %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("config", func(t *testing.T) {
		r := fixpoint(t, time.Minute, "config", "db", "--data-dir", data)
		if r.code != 0 {
			t.Fatalf("config db: %d %s", r.code, r.stderr)
		}
		for _, want := range []string{"max_connections  int", "200", "set", "port", "6379", "default"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("config db lacks %q:\n%s", want, r.stdout)
			}
		}
		r = fixpoint(t, time.Minute, "config", "db", "-o", "json", "--data-dir", data)
		var sc api.ServiceConfig
		if err := json.Unmarshal([]byte(r.stdout), &sc); err != nil || sc.Config["port"].Source != "default" || sc.Config["max_connections"].Source != "set" {
			t.Errorf("config db -o json: %v\n%s", err, r.stdout)
		}
		r = fixpoint(t, time.Minute, "config", "db/0", "--data-dir", data)
		if r.code != exitFailed || !strings.Contains(r.stderr, "fixpoint config db") {
			t.Errorf("config of a unit: %d %s", r.code, r.stderr)
		}
	})

	t.Run("show-unit", func(t *testing.T) {
		r := fixpoint(t, time.Minute, "show-unit", "web/0", "-o", "json", "--data-dir", data)
		var d unitDetail
		if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
			t.Fatalf("show-unit: %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
		}
		if d.Machine != "local" || d.Phase != engine.Settled || len(d.Relations) != 2 || len(d.Runs) == 0 || d.Since.IsZero() {
			t.Errorf("show-unit web/0: %s", r.stdout)
		}
		wrote := false
		for _, rel := range d.Relations {
			if rel.Remote == "db:db" && len(rel.Members) == 2 && len(rel.Settings) > 0 {
				wrote = true
			}
		}
		if !wrote {
			t.Errorf("show-unit web/0 lacks its db relation with members and settings: %s", r.stdout)
		}
		r = fixpoint(t, time.Minute, "show-unit", "web/0", "--data-dir", data)
		if r.code != 0 || !strings.Contains(r.stdout, "last_runs:") {
			t.Errorf("show-unit yaml: %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("debug universe on a service", func(t *testing.T) {
		r := fixpoint(t, time.Minute, "debug", "universe", "web", "--data-dir", data)
		if r.code != exitFailed || !strings.Contains(r.stderr, "web is a service; its units are web/0, web/1") {
			t.Errorf("debug universe web: %d %s", r.code, r.stderr)
		}
	})

	t.Run("universe maps are {} not null", func(t *testing.T) {
		r := fixpoint(t, time.Minute, "debug", "universe", "web/0", "--data-dir", data)
		if r.code != 0 || strings.Contains(r.stdout, `"remote_app": null`) || strings.Contains(r.stdout, `"state": null`) || !strings.Contains(r.stdout, `"remote_app": {}`) {
			t.Errorf("debug universe web/0: %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("tokens", func(t *testing.T) {
		var ep endpoint
		raw, err := os.ReadFile(filepath.Join(data, endpointFile))
		if err != nil || json.Unmarshal(raw, &ep) != nil {
			t.Fatal(err)
		}
		empty := t.TempDir()
		r := fixpoint(t, time.Minute, "status", "--controller", ep.Addr, "--token", "wrong", "--data-dir", empty)
		if r.code != exitFailed || !strings.Contains(r.stderr, "pass --token or --token-file, or set FIXPOINT_TOKEN") || strings.Contains(r.stderr, "Authorization") {
			t.Errorf("wrong token: %d %s", r.code, r.stderr)
		}
		r = fixpoint(t, time.Minute, "status", "--controller", ep.Addr, "--token-file", filepath.Join(data, operatorTokenFile), "--data-dir", empty)
		if r.code != 0 {
			t.Errorf("--token-file: %d %s", r.code, r.stderr)
		}
		r = runFixpoint(t, time.Minute, "", []string{"FIXPOINT_ADDR=" + ep.Addr, "FIXPOINT_TOKEN=" + ep.Token}, "status", "--data-dir", empty)
		if r.code != 0 {
			t.Errorf("FIXPOINT_ADDR and FIXPOINT_TOKEN: %d %s", r.code, r.stderr)
		}
	})

	t.Run("the last voter stays", func(t *testing.T) {
		r := fixpoint(t, time.Minute, "cluster", "remove", "local", "--data-dir", data)
		if r.code != exitFailed || !strings.Contains(r.stderr, "cannot remove the last voter local") {
			t.Errorf("cluster remove of the only node: %d %s", r.code, r.stderr)
		}
		var ep endpoint
		raw, _ := os.ReadFile(filepath.Join(data, endpointFile))
		_ = json.Unmarshal(raw, &ep)
		req, _ := http.NewRequest(http.MethodPost, ep.Addr+"/v1/raft/remove", strings.NewReader(`{"id":"local"}`))
		req.Header.Set("Authorization", "Bearer "+ep.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusConflict {
			t.Errorf("POST /v1/raft/remove of the last voter: %s, want 409", resp.Status)
		}
		statusJSON(t, data)
	})

	t.Run("plan warns of a rename", func(t *testing.T) {
		env, err := os.ReadFile(repo("testdata", "demo", "env.cue"))
		if err != nil {
			t.Fatal(err)
		}
		renamed := strings.ReplaceAll(strings.Replace(string(env), `"shop"`, `"shop2"`, 1), `"../charms/`, `"`+repo("testdata", "charms")+`/`)
		file := filepath.Join(t.TempDir(), "env.cue")
		if err := os.WriteFile(file, []byte(renamed), 0o644); err != nil {
			t.Fatal(err)
		}
		r := fixpoint(t, 2*time.Minute, "plan", "-f", file, "--data-dir", data)
		if !strings.Contains(r.stderr, `the running environment is named "shop"; applying this one renames it to "shop2"`) {
			t.Errorf("plan of a renamed environment: %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})

	p.stop(t)
	if _, err := os.Stat(filepath.Join(data, endpointFile)); err == nil {
		t.Errorf("up left %s behind", endpointFile)
	}
	r = fixpoint(t, time.Minute, "status", "--data-dir", data)
	if r.code != exitFailed || !strings.Contains(r.stderr, "no fixpoint up is running for "+data+"; start one") {
		t.Errorf("status with up stopped: %d %s", r.code, r.stderr)
	}
	// A killed up leaves its address; the next command says the same.
	if err := writeEndpoint(data, endpoint{Addr: "127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	r = fixpoint(t, time.Minute, "status", "--data-dir", data)
	if r.code != exitFailed || !strings.Contains(r.stderr, "no fixpoint up is running for "+data+"; start one or pass --controller") {
		t.Errorf("status with a stale address: %d %s", r.code, r.stderr)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestVersionAndSuggestions: version and --version say the version, the
// commit and Go; another tool's word for a command gets fixpoint's.
func TestVersionAndSuggestions(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		r := fixpoint(t, time.Minute, args...)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "fixpoint ") || !strings.Contains(r.stdout, "commit ") || !strings.Contains(r.stdout, "go       go1.") {
			t.Errorf("%v: %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	for word, want := range map[string]string{"integrate": "did you mean fixpoint relate A B", "export-bundle": "did you mean fixpoint export"} {
		r := fixpoint(t, time.Minute, word)
		if r.code != exitFailed || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: %d %s", word, r.code, r.stderr)
		}
	}
	r := fixpoint(t, time.Minute, "stauts")
	if r.code != exitFailed || !strings.Contains(r.stderr, "status") {
		t.Errorf("stauts: %d %s", r.code, r.stderr)
	}
}

// TestTLSCertRefusesToOverwrite: tls cert, like tls init, keeps an
// existing certificate unless --force.
func TestTLSCertRefusesToOverwrite(t *testing.T) {
	dir := t.TempDir()
	if r := fixpoint(t, time.Minute, "tls", "init", "--dir", dir); r.code != 0 {
		t.Fatalf("tls init: %d %s", r.code, r.stderr)
	}
	if r := fixpoint(t, time.Minute, "tls", "cert", "--dir", dir, "--role", "server", "--name", "n1"); r.code != 0 {
		t.Fatalf("tls cert: %d %s", r.code, r.stderr)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "n1.pem"))
	r := fixpoint(t, time.Minute, "tls", "cert", "--dir", dir, "--role", "server", "--name", "n1")
	after, _ := os.ReadFile(filepath.Join(dir, "n1.pem"))
	if r.code != exitFailed || !strings.Contains(r.stderr, "--force") || string(before) != string(after) {
		t.Errorf("second tls cert: %d %s", r.code, r.stderr)
	}
	r = fixpoint(t, time.Minute, "tls", "cert", "--dir", dir, "--role", "server", "--name", "n1", "--force")
	after, _ = os.ReadFile(filepath.Join(dir, "n1.pem"))
	if r.code != 0 || string(before) == string(after) {
		t.Errorf("tls cert --force: %d %s", r.code, r.stderr)
	}
}
