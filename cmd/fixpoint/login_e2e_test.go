package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLoginContextsAndCA drives a TLS server as a user would: an x509
// failure says which file to pass, FIXPOINT_CA replaces --tls-ca, login
// saves a context (0600 in a 0700 dir) that becomes current, --context and
// FIXPOINT_CONTEXT pick one, and flags beat the environment, which beats
// the context.
func TestLoginContextsAndCA(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 1, true)
	otherDir := t.TempDir()
	if r := fixpoint(t, time.Minute, "tls", "init", "--dir", otherDir); r.code != 0 {
		t.Fatalf("tls init: %s", r.stderr)
	}
	ca, otherCA := c.ca(), filepath.Join(otherDir, "ca.pem")
	addr := c.addrs[0]
	bare := strings.TrimPrefix(addr, "https://")
	tokFile, token := c.tokenFile, c.token
	home := t.TempDir()
	config := filepath.Join(home, "config")
	work := t.TempDir() // no .fixpoint here
	cli := func(env []string, args ...string) run {
		t.Helper()
		return runFixpoint(t, time.Minute, work, append([]string{"HOME=" + home, "XDG_CONFIG_HOME=" + config}, env...), args...)
	}
	expect := func(r run, code int, says ...string) {
		t.Helper()
		if r.code != code {
			t.Errorf("exit %d, want %d\n%s%s", r.code, code, r.stdout, r.stderr)
		}
		for _, s := range says {
			if !strings.Contains(r.stdout+r.stderr, s) {
				t.Errorf("output lacks %q:\n%s%s", s, r.stdout, r.stderr)
			}
		}
	}

	// Without a CA the x509 error names the file and the ways to pass it.
	expect(cli(nil, "status", "--controller", addr, "--token-file", tokFile), exitFailed,
		"not signed by a CA you trust", "--tls-ca tls/ca.pem", "FIXPOINT_CA")
	// FIXPOINT_CA instead of --tls-ca; a bare address is then https.
	expect(cli([]string{"FIXPOINT_CA=" + ca}, "status", "--controller", bare, "--token-file", tokFile), 0)

	// A login that cannot talk to the control plane saves nothing.
	file := filepath.Join(config, "fixpoint", contextsFile)
	expect(cli(nil, "login", addr, "--token-file", tokFile, "--name", "prod"), exitFailed, "not signed by a CA you trust", "nothing was saved")
	if _, err := os.Stat(file); err == nil {
		t.Fatal("a failed login saved a context")
	}
	expect(cli(nil, "login", bare, "--token-file", tokFile, "--ca", ca, "--name", "prod"), 0, "now the current context")
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("contexts file: %v %v, want mode 0600", fi, err)
	}
	if di, err := os.Stat(filepath.Dir(file)); err != nil || di.Mode().Perm() != 0o700 {
		t.Fatalf("contexts dir: %v %v, want mode 0700", di, err)
	}
	var saved contexts
	if err := json.Unmarshal([]byte(readFile(t, file)), &saved); err != nil {
		t.Fatal(err)
	}
	if pc := saved.Contexts["prod"]; saved.Current != "prod" || pc == nil || pc.Token != token || pc.CA != ca || strings.Join(pc.Addrs, ",") != addr {
		t.Fatalf("saved %s", readFile(t, file))
	}

	// Commands need no flags now.
	expect(cli(nil, "status"), 0)
	// The last login is current; the list marks it and shows no token.
	expect(cli(nil, "login", addr, "--token-file", tokFile, "--ca", ca, "--name", "staging"), 0)
	r := cli(nil, "login")
	expect(r, 0, "prod", "staging", ca)
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.Contains(l, "staging") != strings.HasPrefix(l, "*") {
			t.Errorf("login's list marks the wrong current context:\n%s", r.stdout)
		}
	}
	if strings.Contains(r.stdout, token) {
		t.Error("login's list shows the token")
	}
	expect(cli(nil, "status", "--context", "prod"), 0)
	expect(cli([]string{"FIXPOINT_CONTEXT=prod"}, "status"), 0)
	expect(cli([]string{"FIXPOINT_CONTEXT=nope"}, "status"), exitFailed, `$FIXPOINT_CONTEXT names context "nope", which is not saved (saved: prod, staging)`)
	expect(cli(nil, "status", "--context", "nope"), exitFailed, `--context names context "nope"`)

	// Flags beat the environment, which beats the context.
	expect(cli(nil, "status", "--controller", "http://127.0.0.1:1"), exitFailed, "127.0.0.1:1")
	expect(cli([]string{"FIXPOINT_ADDR=http://127.0.0.1:1"}, "status"), exitFailed, "127.0.0.1:1")
	expect(cli([]string{"FIXPOINT_CA=" + otherCA}, "status"), exitFailed, "not signed by the CA in "+otherCA+" (given by $FIXPOINT_CA)")
	expect(cli([]string{"FIXPOINT_CA=" + otherCA}, "status", "--tls-ca", ca), 0)
	// An explicit --data-dir is used rather than the current context.
	empty := t.TempDir()
	expect(cli(nil, "status", "--data-dir", empty), exitFailed, "no fixpoint up is running for "+empty)

	// A contexts file others can read is refused, naming the fix.
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	expect(cli(nil, "status"), exitFailed, "chmod 600 "+file)
}
