package main

import (
	"strings"
	"testing"
	"time"
)

// TestEnvironmentTokensThroughTheCLI: against a running up, the cluster's
// operator adds an environment and makes a reader token of the default
// environment and an operator token of the new one; the reader reads the
// default environment and is refused every change and exec, the other
// environment's operator is refused the default environment's routes and
// the cluster's, and revoking or removing closes them.
func TestEnvironmentTokensThroughTheCLI(t *testing.T) {
	t.Parallel()
	s := startSecured(t)
	d := []string{"--data-dir", s.data}
	must := func(args ...string) run {
		t.Helper()
		r := fixpoint(t, time.Minute, append(args, d...)...)
		if r.code != 0 {
			t.Fatalf("fixpoint %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
		return r
	}
	// as runs fixpoint with token in $FIXPOINT_TOKEN, which comes before
	// the data dir's operator token.
	as := func(token string, args ...string) run {
		t.Helper()
		return runFixpoint(t, time.Minute, "", []string{"FIXPOINT_TOKEN=" + token}, append(args, d...)...)
	}
	refused := func(r run, what, want string) {
		t.Helper()
		if r.code == 0 || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: exit %d, want a refusal saying %q\n%s%s", what, r.code, want, r.stdout, r.stderr)
		}
	}

	if r := must("env", "add", "dev", "--max-units", "5"); !strings.Contains(r.stdout, "environment dev added") {
		t.Errorf("env add: %s", r.stdout)
	}
	if r := must("envs"); !strings.Contains(r.stdout, "shop (default)") || !strings.Contains(r.stdout, "dev ") {
		t.Errorf("envs:\n%s", r.stdout)
	}
	if r := must("env", "show", "dev", "-o", "json"); !strings.Contains(r.stdout, `"max_units": 5`) {
		t.Errorf("env show dev:\n%s", r.stdout)
	}
	refused(fixpoint(t, time.Minute, append([]string{"env", "add", "Dev"}, d...)...), "env add Dev", "is invalid")

	reader := strings.TrimSpace(must("token", "create", "--role", "reader", "--name", "dash").stdout)
	devOp := strings.TrimSpace(must("token", "create", "--env", "dev", "--role", "operator", "--name", "devops").stdout)
	if len(reader) < 32 || len(devOp) < 32 || reader == devOp {
		t.Fatalf("tokens %q and %q", reader, devOp)
	}
	if r := must("token", "list"); strings.Contains(r.stdout, reader) || !strings.Contains(r.stdout, "dash") || !strings.Contains(r.stdout, "devops") {
		t.Errorf("token list:\n%s", r.stdout)
	}

	// The default environment's reader reads it, and changes nothing.
	if r := as(reader, "status"); r.code != 0 {
		t.Errorf("the reader's status: exit %d\n%s", r.code, r.stderr)
	}
	exec := runFixpoint(t, time.Minute, "", []string{"FIXPOINT_TOKEN=" + reader}, "exec", "--unit", "db/0", "--data-dir", s.data, "--", "true")
	refused(exec, "the reader's exec", "a reader token only reads")
	refused(as(reader, "resolved", "--all"), "the reader's resolved", "a reader token only reads")
	refused(as(reader, "machine", "reset", "local"), "the reader's machine reset", "this one is the cluster's")
	refused(as(reader, "envs"), "the reader's envs", "this one is the cluster's")

	// dev's operator opens nothing served here yet, nor the cluster's.
	refused(as(devOp, "status"), "dev's operator reading the default environment", "-e/--env dev")
	if r := as(devOp, "status", "-e", "dev"); r.code != 0 {
		t.Errorf("dev's operator reading dev: exit %d\n%s", r.code, r.stderr)
	}
	refused(as(devOp, "token", "create", "--env", "dev", "--role", "reader"), "dev's operator making a token", "this one is the cluster's")
	refused(as(devOp, "env", "remove", "dev"), "dev's operator removing dev", "this one is the cluster's")

	must("token", "revoke", "dash")
	refused(as(reader, "status"), "a revoked reader", "answered 401")
	must("env", "remove", "dev")
	refused(as(devOp, "envs"), "a token of the removed dev", "answered 401")
	if r := must("envs"); strings.Contains(r.stdout, "dev ") {
		t.Errorf("envs after removing dev:\n%s", r.stdout)
	}
	// revoke join keeps revoking the join token.
	if r := must("token", "revoke", "join"); !strings.Contains(r.stdout, "join token revoked") {
		t.Errorf("token revoke join: %s", r.stdout)
	}
	if code, body, _ := s.register(t, s.join, "m9"); code != 401 {
		t.Errorf("the revoked join token registers: %d %s", code, body)
	}
}
