package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
)

// envFile writes an environment file named name, of one db service of
// units units, and returns its path.
func envFile(t *testing.T, dir, name string, units int) string {
	t.Helper()
	path := filepath.Join(dir, name+".cue")
	body := "apiVersion: \"fixpoint/v1\"\nname: \"" + name + "\"\nservices: db: {charm: \"" + repo("testdata", "charms", "db") + "\", units: " + string(rune('0'+units)) + "}\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestEnvironmentsThroughTheCLI: on three TLS servers started with
// --max-environments 3, the operator adds dev and qa and applies a file
// named after each: each lands in the environment it names, and status,
// export, events and config read each one's own with -e, with
// $FIXPOINT_ENV and with the context's environment (login --env); an edit
// with -e changes that environment alone; an -e that disagrees with the
// file is refused before anything is sent; a third environment is over
// the limit; `fixpoint envs` shows both with their units; and an
// operator token of dev reaches dev's routes and is refused every one of
// qa's, through the CLI and on qa's prefixed paths.
func TestEnvironmentsThroughTheCLI(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3, true, "--max-environments", "3")
	base := []string{"FIXPOINT_ADDR=" + strings.Join(c.addrs, ","), "FIXPOINT_TOKEN=" + c.token}
	cli := func(env []string, args ...string) run {
		t.Helper()
		return runFixpoint(t, 5*time.Minute, "", append(append([]string(nil), base...), env...), append(args, c.clientTL...)...)
	}
	must := func(env []string, args ...string) run {
		t.Helper()
		r := cli(env, args...)
		if r.code != 0 {
			t.Fatalf("fixpoint %s (%v): exit %d\n%s%s", strings.Join(args, " "), env, r.code, r.stdout, r.stderr)
		}
		return r
	}
	for _, name := range []string{"dev", "qa"} {
		must(nil, "env", "add", name)
	}
	if r := cli(nil, "env", "add", "third"); r.code == 0 || !strings.Contains(r.stderr, "--max-environments") {
		t.Errorf("a fourth environment past --max-environments 3: exit %d\n%s", r.code, r.stderr)
	}
	dir := t.TempDir()
	devFile, qaFile := envFile(t, dir, "dev", 2), envFile(t, dir, "qa", 3)
	if r := cli(nil, "apply", "-f", qaFile, "-e", "dev", "--yes"); r.code == 0 || !strings.Contains(r.stderr, "disagrees with the environment file") {
		t.Errorf("apply qa's file with -e dev: exit %d\n%s", r.code, r.stderr)
	}
	var envs []struct {
		Name     string `json:"name"`
		Services int    `json:"services"`
	}
	if err := json.Unmarshal([]byte(must(nil, "envs", "-o", "json").stdout), &envs); err != nil || len(envs) != 3 {
		t.Fatalf("envs: %+v, %v", envs, err)
	}
	for _, e := range envs {
		if e.Services != 0 {
			t.Errorf("the refused apply deployed to %q: %d services", e.Name, e.Services)
		}
	}
	must(nil, "apply", "-f", devFile, "-e", "dev", "--yes")
	must(nil, "apply", "-f", qaFile, "--yes")

	statusIn := func(env []string, args ...string) *engine.Status {
		t.Helper()
		var st engine.Status
		r := must(env, append([]string{"status", "-o", "json"}, args...)...)
		if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
			t.Fatalf("status %v: %v\n%s", args, err, r.stdout)
		}
		return &st
	}
	for _, tc := range []struct {
		how   string
		env   []string
		args  []string
		name  string
		units int
	}{
		{"-e dev", nil, []string{"-e", "dev"}, "dev", 2},
		{"--env qa", nil, []string{"--env", "qa"}, "qa", 3},
		{"$FIXPOINT_ENV=qa", []string{"FIXPOINT_ENV=qa"}, nil, "qa", 3},
		{"-e dev over $FIXPOINT_ENV=qa", []string{"FIXPOINT_ENV=qa"}, []string{"-e", "dev"}, "dev", 2},
	} {
		st := statusIn(tc.env, tc.args...)
		if st.Environment != tc.name || len(st.Units) != tc.units {
			t.Errorf("status with %s: environment %q with %d units; want %s with %d", tc.how, st.Environment, len(st.Units), tc.name, tc.units)
		}
		exp := must(tc.env, append([]string{"export"}, tc.args...)...).stdout
		if !regexp.MustCompile(`(?m)^name:\s+"` + tc.name + `"$`).MatchString(exp) {
			t.Errorf("export with %s names another environment:\n%s", tc.how, exp)
		}
		ev := must(tc.env, append([]string{"events", "db", "-o", "json"}, tc.args...)...).stdout
		if !strings.Contains(ev, `"env":"`+tc.name+`"`) || strings.Contains(ev, `"env":"`+other(tc.name)+`"`) {
			t.Errorf("events with %s are not %s's alone:\n%s", tc.how, tc.name, ev)
		}
	}
	if st := statusIn(nil); len(st.Units) != 0 {
		t.Errorf("the default environment holds %d units; the files named dev and qa", len(st.Units))
	}

	// An edit with -e changes that environment alone.
	must(nil, "config", "db", "port=7000", "-e", "dev")
	for env, want := range map[string]string{"dev": "7000", "qa": "6379"} {
		r := must(nil, "config", "db", "-e", env, "-o", "json")
		var sc struct {
			Config map[string]struct {
				Value  any    `json:"value"`
				Source string `json:"source"`
			} `json:"config"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &sc); err != nil {
			t.Fatalf("config -e %s: %v\n%s", env, err, r.stdout)
		}
		if got := jsonText(sc.Config["port"].Value); got != want {
			t.Errorf("config -e %s: port %s, want %s\n%s", env, got, want, r.stdout)
		}
	}

	// The context's environment, under a config dir of the test's own.
	home := t.TempDir()
	ctxEnv := []string{"XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "HOME=" + home}
	tokenFile := filepath.Join(home, "operator.token")
	if err := os.WriteFile(tokenFile, []byte(c.token), 0o600); err != nil {
		t.Fatal(err)
	}
	loginArgs := append(append([]string{"login"}, c.addrs...), "--token-file", tokenFile, "--env", "qa", "--name", "lab")
	if len(c.clientTL) == 2 {
		loginArgs = append(loginArgs, "--ca", c.clientTL[1])
	}
	if r := runFixpoint(t, time.Minute, "", ctxEnv, loginArgs...); r.code != 0 {
		t.Fatalf("login --env qa: exit %d\n%s", r.code, r.stderr)
	}
	if r := runFixpoint(t, time.Minute, "", ctxEnv, "status", "-o", "json"); r.code != 0 || !strings.Contains(r.stdout, `"environment":"qa"`) && !strings.Contains(r.stdout, `"environment": "qa"`) {
		t.Errorf("status through a context of qa: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runFixpoint(t, time.Minute, "", ctxEnv, "login", "--env", "nope"); r.code == 0 || !strings.Contains(r.stderr, "does not exist") {
		t.Errorf("login --env nope: exit %d\n%s", r.code, r.stderr)
	}

	rows := must(nil, "envs").stdout
	for _, want := range []string{"dev", "qa", "PHASES", "CONVERGED", "2 pending", "3 pending"} {
		if !strings.Contains(rows, want) {
			t.Errorf("envs lacks %q:\n%s", want, rows)
		}
	}

	// dev's operator token: dev's routes, none of qa's.
	devOp := strings.TrimSpace(must(nil, "token", "create", "--env", "dev", "--role", "operator", "--name", "devops").stdout)
	as := []string{"FIXPOINT_TOKEN=" + devOp}
	if st := statusIn(as, "-e", "dev"); st.Environment != "dev" {
		t.Errorf("dev's operator reading dev: %q", st.Environment)
	}
	for _, args := range [][]string{{"status", "-e", "qa"}, {"export", "-e", "qa"}, {"events", "-e", "qa"}, {"config", "db", "-e", "qa"}, {"status"}} {
		if r := cli(as, args...); r.code == 0 || !strings.Contains(r.stderr, "token devops (operator of environment dev) may not") {
			t.Errorf("dev's operator: fixpoint %s: exit %d, want a refusal\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	for _, path := range []string{"/v1/envs/qa/status", "/v1/envs/qa/env", "/v1/envs/qa/events", "/v1/envs/qa/services/db/config", "/v1/envs/qa/state"} {
		req, err := http.NewRequest(http.MethodGet, c.addrs[0]+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+devOp)
		resp, err := c.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("GET %s with dev's operator token: %d, want 403", path, resp.StatusCode)
		}
	}
}

// other is the environment of this test that is not name.
func other(name string) string {
	if name == "dev" {
		return "qa"
	}
	return "dev"
}

// jsonText is a decoded JSON value as text.
func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
