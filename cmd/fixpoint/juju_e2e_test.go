package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The juju front through the real binary, run as juju (a symlink) and as
// fixpoint juju, on testdata/juju/env.cue: driven by the real jubilant
// (testdata/juju/jubilant_check.py) against three TLS servers, and
// checked command by command against an up it finds on .fixpoint in the
// working directory.

// conformanceDir is ../shared/thirdparty/juju-conformance beside the
// checkout (jubilant and canonical/operator's tests), or "".
func conformanceDir() string {
	dir, err := filepath.Abs(repo())
	if err != nil {
		return ""
	}
	for i := 0; i < 3; i++ {
		dir = filepath.Dir(dir)
		c := filepath.Join(dir, "shared", "thirdparty", "juju-conformance")
		if _, err := os.Stat(filepath.Join(c, "jubilant", "__init__.py")); err == nil {
			return c
		}
	}
	return ""
}

// jujuUp starts an up of testdata/juju/env.cue on DIR/.fixpoint, waits
// for the fixed point, and returns DIR, a juju symlink to the binary and
// the up.
func jujuUp(t *testing.T) (dir, jujuBin string, up *upProc) {
	t.Helper()
	dir = t.TempDir()
	bin := t.TempDir()
	jujuBin = filepath.Join(bin, "juju")
	if err := os.Symlink(fixpointBin(t), jujuBin); err != nil {
		t.Fatal(err)
	}
	up = startUp(t, filepath.Join(dir, defaultDataDir), repo("testdata", "juju", "env.cue"))
	up.waitConverged(t, 5*time.Minute)
	return dir, jujuBin, up
}

// TestJujuFrontJubilant drives the juju front with jubilant against three
// TLS servers and an agent, the front finding them as a CI job points it
// there: FIXPOINT_ADDR, FIXPOINT_TOKEN and FIXPOINT_CA.
func TestJujuFrontJubilant(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts four processes; skipped in -short")
	}
	conf := conformanceDir()
	if conf == "" {
		t.Skip("jubilant is not beside the checkout (../shared/thirdparty/juju-conformance): nothing to drive the juju front with")
	}
	if out, err := exec.Command("/usr/bin/python3", "-c", "import yaml").CombinedOutput(); err != nil {
		t.Fatalf("/usr/bin/python3 cannot import yaml, which jubilant needs (apt-get install python3-yaml, as .ci/run does): %v\n%s", err, out)
	}
	c := startCluster(t, 3, true)
	m1 := c.agent("m1")
	c.waitMachines("m1")
	if r := c.cli("apply", "-f", repo("testdata", "juju", "env.cue"), "--yes", "--wait", "--timeout", "10m"); r.code != 0 {
		t.Fatalf("apply: %d\n%s\n%s\nagent:\n%s", r.code, r.stdout, r.stderr, m1.out.String())
	}
	bin := t.TempDir()
	if err := os.Symlink(fixpointBin(t), filepath.Join(bin, "juju")); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "PYTHONPATH=" + conf,
		"FIXPOINT_ADDR=" + strings.Join(c.addrs, ","), "FIXPOINT_TOKEN=" + c.token, "FIXPOINT_CA=" + c.ca()}
	r := runArgv(t, 10*time.Minute, t.TempDir(), env, "/usr/bin/python3", repo("testdata", "juju", "jubilant_check.py"), "jt", repo("testdata", "charms", "classic-kv"))
	if r.code != 0 || !strings.Contains(r.stdout, "all checks passed") {
		t.Fatalf("jubilant against the juju front exited %d:\n%s\n%s\nagent:\n%s", r.code, r.stdout, r.stderr, m1.out.String())
	}
}

// jujuModels: add-model makes an environment that models, show-model
// and status -m show, and destroy-model removes it.
func jujuModels(t *testing.T, juju func(args ...string) run) {
	t.Helper()
	if r := juju("add-model", "--no-switch", "other"); r.code != 0 || !strings.Contains(r.stderr, "Added 'other' model") {
		t.Fatalf("add-model exited %d: %s", r.code, r.stderr)
	}
	if r := juju("add-model", "--no-switch", "other"); r.code != 1 || !strings.Contains(r.stderr, "other") {
		t.Errorf("add-model again exited %d: %s", r.code, r.stderr)
	}
	var models struct {
		Models []struct {
			ShortName string `json:"short-name"`
			UUID      string `json:"model-uuid"`
		} `json:"models"`
		Current string `json:"current-model"`
	}
	r := juju("models", "--format", "json")
	if err := json.Unmarshal([]byte(r.stdout), &models); err != nil || len(models.Models) != 2 || models.Current != "jt" {
		t.Fatalf("models exited %d: %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	r = juju("show-model", "other", "--format", "json")
	var shown map[string]struct {
		ShortName string `json:"short-name"`
		UUID      string `json:"model-uuid"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &shown); err != nil || shown["other"].ShortName != "other" || len(shown["other"].UUID) != 36 || shown["other"].UUID == models.Models[0].UUID {
		t.Errorf("show-model other exited %d: %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if r := juju("status", "--format", "json", "-m", "admin/other"); r.code != 0 || !strings.Contains(r.stdout, `"name":"other"`) || strings.Contains(r.stdout, `"kv"`) {
		t.Errorf("status -m other exited %d: %s%s", r.code, r.stdout, r.stderr)
	}
	if r := juju("destroy-model", "other", "--no-prompt", "--destroy-storage", "--force", "--timeout", "5m"); r.code != 0 {
		t.Fatalf("destroy-model exited %d: %s%s", r.code, r.stdout, r.stderr)
	}
	if r := juju("show-model", "other"); r.code != 1 || !strings.Contains(r.stderr, "(not found)") {
		t.Errorf("show-model of a destroyed model exited %d: %s", r.code, r.stderr)
	}
	if r := juju("destroy-model", "jt", "--no-prompt"); r.code != 1 || !strings.Contains(r.stderr, "default environment") {
		t.Errorf("destroy-model of the default environment exited %d: %s", r.code, r.stderr)
	}
}

// jujuUserSecrets: a user secret added, revised, granted, revoked and
// removed by command, as secrets and show-secret show it.
func jujuUserSecrets(t *testing.T, juju func(args ...string) run) {
	t.Helper()
	r := juju("add-secret", "-m", "jt", "dbpass", "password=hunter2-xyzzy", "--info", "the db password")
	uri := strings.TrimSpace(r.stdout)
	if r.code != 0 || !strings.HasPrefix(uri, "secret:") {
		t.Fatalf("add-secret exited %d: %s%s", r.code, r.stdout, r.stderr)
	}
	id := strings.TrimPrefix(uri, "secret:")
	show := func(args ...string) secretJSON {
		t.Helper()
		r := juju(append([]string{"show-secret", "--format", "json"}, args...)...)
		var shown map[string]secretJSON
		if err := json.Unmarshal([]byte(r.stdout), &shown); err != nil {
			t.Fatalf("show-secret %v exited %d: %v\n%s%s", args, r.code, err, r.stdout, r.stderr)
		}
		return shown[id]
	}
	s := show("dbpass", "--reveal")
	if s.Owner != "<model>" || s.Name != "dbpass" || s.Revision != 1 || s.Content == nil || s.Content.Data["password"] != "hunter2-xyzzy" || s.Description != "the db password" {
		t.Errorf("added: %+v", s)
	}
	if made, err := time.Parse(time.RFC3339, s.Created); err != nil || time.Since(made) > time.Hour || s.Updated != s.Created {
		t.Errorf("added at %q, updated %q: %v", s.Created, s.Updated, err)
	}
	if r := juju("update-secret", uri, "password=second-xyzzy"); r.code != 0 {
		t.Fatalf("update-secret exited %d: %s", r.code, r.stderr)
	}
	if r := juju("grant-secret", "dbpass", "kv"); r.code != 0 {
		t.Fatalf("grant-secret exited %d: %s", r.code, r.stderr)
	}
	s = show(id, "--reveal")
	if s.Revision != 2 || s.Content.Data["password"] != "second-xyzzy" || len(s.Access) != 1 || s.Access[0].Target != "application-kv" {
		t.Errorf("updated and granted: %+v", s)
	}
	if r := juju("revoke-secret", "dbpass", "kv"); r.code != 0 {
		t.Fatalf("revoke-secret exited %d: %s", r.code, r.stderr)
	}
	if s = show(id); len(s.Access) != 0 {
		t.Errorf("revoked: %+v", s)
	}
	if r := juju("add-secret", "dbpass", "password=again-xyzzy"); r.code != 1 || !strings.Contains(r.stderr, "already exists") {
		t.Errorf("add-secret of an existing name exited %d: %s", r.code, r.stderr)
	}
	if r := juju("remove-secret", "dbpass"); r.code != 0 {
		t.Fatalf("remove-secret exited %d: %s", r.code, r.stderr)
	}
	if r := juju("show-secret", id); r.code != 1 || !strings.Contains(r.stderr, "(not found)") {
		t.Errorf("show-secret of a removed secret exited %d: %s", r.code, r.stderr)
	}
}

// secretJSON is one secret of juju secrets and show-secret --format json.
type secretJSON struct {
	Revision    int    `json:"revision"`
	Owner       string `json:"owner"`
	Label       string `json:"label"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Created     string `json:"created"`
	Updated     string `json:"updated"`
	Content     *struct {
		Data map[string]string `json:"Data"`
	} `json:"content"`
	Access []struct {
		Target, Scope, Role string
	} `json:"access"`
}

func TestJujuFrontCommandLine(t *testing.T) {
	t.Parallel()
	dir, jujuBin, up := jujuUp(t)
	juju := func(args ...string) run {
		t.Helper()
		return runArgv(t, 5*time.Minute, dir, nil, append([]string{jujuBin}, args...)...)
	}
	// The same front under fixpoint's name.
	if r := runFixpoint(t, time.Minute, dir, nil, "juju", "status", "--format", "json", "--model", "admin/jt"); r.code != 0 || !strings.Contains(r.stdout, `"name":"jt"`) {
		t.Errorf("fixpoint juju status exited %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Juju's conventions: ERROR lines, 1 for a failure, 2 for usage.
	if r := juju("status", "-m", "other"); r.code != 1 || !strings.HasPrefix(r.stderr, `ERROR model "other" not found`) || !strings.Contains(r.stderr, "its models are jt") {
		t.Errorf("status -m other exited %d: %s", r.code, r.stderr)
	}
	if r := juju("no-such-command"); r.code != 2 || !strings.HasPrefix(r.stderr, "ERROR ") {
		t.Errorf("an unknown command exited %d: %s", r.code, r.stderr)
	}
	jujuModels(t, juju)
	jujuUserSecrets(t, juju)
	// expose is recorded, as status shows it; a deploy from a channel
	// records it and its revision. trust needs the environment's
	// credential, which jt declares none of.
	if r := juju("trust", "db"); r.code != 1 || !strings.Contains(r.stderr, "declares no credential") {
		t.Errorf("trust db without a credential exited %d: %s", r.code, r.stderr)
	}
	for _, args := range [][]string{{"expose", "kv"}, {"deploy", repo("testdata", "charms", "classic-kv"), "kv3", "--channel", "beta", "--revision", "7", "-n", "0"}} {
		if r := juju(args...); r.code != 0 {
			t.Fatalf("%v exited %d: %s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	var st struct {
		Applications map[string]struct {
			Exposed      bool   `json:"exposed"`
			CharmChannel string `json:"charm-channel"`
			CharmRev     int    `json:"charm-rev"`
		} `json:"applications"`
	}
	r := juju("status", "--format", "json")
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || !st.Applications["kv"].Exposed || st.Applications["db"].Exposed ||
		st.Applications["kv3"].CharmChannel != "latest/beta" || st.Applications["kv3"].CharmRev != 7 {
		t.Errorf("status after expose and deploy --channel: %v\n%s%s", err, r.stdout, r.stderr)
	}
	if r := juju("model-config", "update-status-hook-interval=1m"); r.code != 0 {
		t.Fatalf("model-config set exited %d: %s", r.code, r.stderr)
	}
	if r := juju("model-config", "--format", "json"); !strings.Contains(r.stdout, `"update-status-hook-interval":{"Value":"1m","Source":"model"}`) || !strings.Contains(r.stdout, `"name":{"Value":"jt","Source":"model"}`) {
		t.Errorf("model-config after setting: %s%s", r.stdout, r.stderr)
	}
	if r := juju("model-config", "logging-config=x"); r.code != 1 || !strings.Contains(r.stderr, "does not take this key") {
		t.Errorf("model-config of a key fixpoint lacks exited %d: %s", r.code, r.stderr)
	}
	for _, args := range [][]string{{"model-config", "--reset", "update-status-hook-interval"}, {"unexpose", "kv"}, {"remove-application", "kv3", "--no-prompt"}} {
		if r := juju(args...); r.code != 0 {
			t.Fatalf("%v exited %d: %s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	if r := juju("deploy", "./x.charm", "--base", "ubuntu@22.04"); r.code != 1 || !strings.Contains(r.stderr, "--base: not supported by fixpoint") {
		t.Errorf("deploy --base exited %d: %s", r.code, r.stderr)
	}
	// A removal without --no-prompt off a terminal removes nothing and
	// says which flag removes it.
	if r := juju("remove-unit", "kv/1"); r.code != 2 || !strings.Contains(r.stderr, "--no-prompt") || strings.Contains(r.stderr, "--yes") {
		t.Errorf("remove-unit without --no-prompt exited %d: %s", r.code, r.stderr)
	}
	// A secret a charm adds (secret-add through exec), as juju secrets and
	// show-secret --reveal show it.
	r = juju("exec", "--format", "json", "--unit", "kv/leader", "--", "secret-add", "--label", "thelabel", "some=content")
	if r.code != 0 {
		t.Fatalf("exec secret-add exited %d: %s%s", r.code, r.stdout, r.stderr)
	}
	r = juju("secrets", "--format", "json", "--model", "jt")
	var list map[string]secretJSON
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list) != 1 {
		t.Fatalf("secrets exited %d: %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	for id, s := range list {
		if strings.HasPrefix(id, "secret:") || s.Owner != "kv" || s.Label != "thelabel" || s.Revision != 1 || s.Content != nil {
			t.Errorf("secrets: %s %+v", id, s)
		}
		r = juju("show-secret", "secret:"+id, "--reveal", "--format", "json")
		var shown map[string]secretJSON
		if err := json.Unmarshal([]byte(r.stdout), &shown); err != nil || shown[id].Content == nil || shown[id].Content.Data["some"] != "content" {
			t.Errorf("show-secret --reveal exited %d: %v\n%s%s", r.code, err, r.stdout, r.stderr)
		}
		if r := juju("secrets", "--owner", "application-db", "--format", "json"); strings.TrimSpace(r.stdout) != "{}" {
			t.Errorf("secrets --owner application-db: %s", r.stdout)
		}
	}
	if r := juju("show-secret", "nosuch", "--format", "json"); r.code != 1 || !strings.Contains(r.stderr, "(not found)") {
		t.Errorf("show-secret nosuch exited %d: %s", r.code, r.stderr)
	}
	// A timeout says so, as jubilant reads it, and the task keeps going
	// (hold runs until its agent stops: the up is stopped, not killed,
	// so that it ends the action's process).
	if r := juju("run", "kv/1", "hold", "--wait", "1s", "--format", "json"); r.code != 1 || !strings.Contains(r.stderr, "timed out") {
		t.Errorf("run hold --wait 1s exited %d: %s", r.code, r.stderr)
	}
	up.stop(t)
}
