package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// charmTestActions runs `charm test` on env with --action flags.
func charmTestActions(t *testing.T, env string, actions ...string) run {
	t.Helper()
	args := []string{"charm", "test", "-f", env, "--schedules", "2"}
	for _, a := range actions {
		args = append(args, "--action", a)
	}
	return fixpoint(t, 5*time.Minute, args...)
}

// wantAll fails the test for each of want that out lacks.
func wantAll(t *testing.T, what, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, out)
		}
	}
}

// TestCharmTestActions runs a classic charm's actions (one on the
// leader, a default filled in), an ops charm's through dispatch and a Go
// charm's through charmapi.MainWithActions at the fixed point: what they
// write is applied (the final status is the action's) and their log and
// results are printed.
func TestCharmTestActions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opsDir := ""
	if fw := opsFrameworkDir(); fw != "" {
		if out, err := exec.Command("/usr/bin/python3", "-c", "import yaml").CombinedOutput(); err != nil {
			t.Fatalf("/usr/bin/python3 cannot import yaml, which ops needs: %v\n%s", err, out)
		}
		opsDir = packOps(t, fw, "ops-actions", filepath.Join(dir, "ops-actions"))
	} else {
		t.Log("the ops framework is not beside the checkout: the ops charm's action is not run")
	}
	acts := []string{"kv/0 greet greeting=hi times=2", "kv/leader remember note=n1"}
	if opsDir != "" {
		acts = append(acts, "oa/0 greet name=bob options.loud=true")
	}
	r := charmTestActions(t, actionsEnv(t, dir, opsDir), acts...)
	if r.code != 0 {
		t.Fatalf("charm test exited %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	wantAll(t, "classic actions", r.stdout,
		"kv/0  active: hi x2",
		"action greet on kv/0: completed\n",
		"greeting 2 times in greet (1)\n",
		"greeting:\n  text: hi\n  times: \"2\"\nunit: kv/0\n",
		"action remember on kv/",
		"remembered: n1\n")
	if opsDir != "" {
		wantAll(t, "ops action", r.stdout,
			"oa/0  active: hello bob!",
			"action greet on oa/0: completed\n",
			"greeting bob 1 times\n",
			"text: hello bob!")
	}

	r = fixpoint(t, 5*time.Minute, "charm", "test", repo("testdata", "charms", "go-actions"), "--units", "2", "--schedules", "2",
		"--action", "go-actions/leader greet name=ann times=2")
	if r.code != 0 {
		t.Fatalf("charm test of go-actions exited %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	wantAll(t, "Go charm action", r.stdout, "active: hello ann", "greeting ann 2 times\n", "text: hello ann\n")
	if !strings.Contains(r.stdout, "action greet on go-actions/0: completed") && !strings.Contains(r.stdout, "action greet on go-actions/1: completed") {
		t.Errorf("Go charm action not completed:\n%s", r.stdout)
	}
}

// TestCharmTestActionFails: a failed action is exit 6 with its message,
// after the schedules converged.
func TestCharmTestActionFails(t *testing.T) {
	t.Parallel()
	r := charmTestActions(t, actionsEnv(t, t.TempDir(), ""), "kv/0 greet fail=boom")
	if r.code != exitUnmet {
		t.Fatalf("charm test with a failing action exited %d; want %d:\n%s%s", r.code, exitUnmet, r.stdout, r.stderr)
	}
	wantAll(t, "stdout", r.stdout, "converged: 2 of 2", "action greet on kv/0: failed: boom\n")
	wantAll(t, "stderr", r.stderr, "action greet on kv/0 failed: boom")
}

// TestCharmTestActionRefused: an action the charm does not declare, params
// its schema refuses and a malformed --action are bad input (exit 1),
// with the reason.
func TestCharmTestActionRefused(t *testing.T) {
	t.Parallel()
	env := actionsEnv(t, t.TempDir(), "")
	for _, c := range []struct{ action, want string }{
		{"kv/0 nosuch", `charm classic-kv has no action "nosuch"; it declares greet, hold, noop, remember`},
		{"kv/0 greet bogus=1", `"bogus" is not a declared parameter`},
		{"kv/0", "want 'UNIT ACTION [KEY=VALUE ...]'"},
		{"kv/9 greet", "unit kv/9 does not exist"},
	} {
		r := charmTestActions(t, env, c.action)
		if r.code != exitFailed || !strings.Contains(r.stderr, c.want) {
			t.Errorf("--action %q exited %d; want %d and %q:\n%s%s", c.action, r.code, exitFailed, c.want, r.stdout, r.stderr)
		}
	}
}
