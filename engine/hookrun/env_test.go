package hookrun

import (
	"context"
	"strings"
	"testing"
)

// An agent started with its credential and an operator's secret in its
// environment runs a hook that dumps its environment: neither reaches it,
// the run's own values and the few inherited basics do.
func TestHookEnvironmentHoldsNoAgentSecrets(t *testing.T) {
	t.Setenv("FIXPOINT_TOKEN", "agent-credential")
	t.Setenv("FIXPOINT_JOIN_TOKEN", "join-token")
	t.Setenv("SECRET_X", "operator-secret")
	t.Setenv("LANG", "C.UTF-8")
	hook := script(t, "env")
	out, err := Run(context.Background(), Spec{Path: hook, Dir: t.TempDir(), InputEnv: "FIXPOINT_UNIVERSE", Env: []string{"FIXPOINT_UNIT=web/0"}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out.Stdout)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		got[k] = v
	}
	for _, secret := range []string{"agent-credential", "join-token", "operator-secret"} {
		if strings.Contains(string(out.Stdout), secret) {
			t.Errorf("the hook saw %q in its environment:\n%s", secret, out.Stdout)
		}
	}
	for _, k := range []string{"FIXPOINT_TOKEN", "FIXPOINT_JOIN_TOKEN", "SECRET_X"} {
		if _, ok := got[k]; ok {
			t.Errorf("the hook saw %s", k)
		}
	}
	if got["FIXPOINT_UNIT"] != "web/0" || got["LANG"] != "C.UTF-8" || got["PATH"] == "" || got["FIXPOINT_UNIVERSE"] == "" {
		t.Errorf("the hook lacks its own values or the inherited basics: %v", got)
	}
}

func TestBaseEnvHasAPathEvenWhenTheAgentHasNone(t *testing.T) {
	t.Setenv("PATH", "")
	if env := BaseEnv(); len(env) == 0 || env[0] != "PATH="+DefaultPath {
		t.Fatalf("BaseEnv() = %v; want PATH=%s first", env, DefaultPath)
	}
}
