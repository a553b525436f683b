package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

// The values of the user secret, first and after the re-apply: they must
// reach the granted service's hooks and nothing at rest or on screen.
var userSecretValues = []string{"user-secret-v1-3f9c71", "user-secret-v2-b04e2d", "user-name-from-env-77a1"}

// userSecretEnv writes env.cue into dir: db-pass's content is content
// and it is granted to grant (sec-reader); sec-other names otherRef
// (db-pass) in its config.
func userSecretEnv(t *testing.T, dir, charm, content, otherRef, grant string) string {
	t.Helper()
	if otherRef == "" {
		otherRef = "db-pass"
	}
	if grant == "" {
		grant = `"sec-reader"`
	}
	env := fmt.Sprintf(`apiVersion: "fixpoint/v1"
name: "usersecrets"
services: {
	"sec-reader": {charm: %q, config: dbpass: "secret:db-pass"}
	"sec-other": {charm: %q, config: dbpass: "secret:%s"}
}
secrets: "db-pass": {
	description: "the database password"
	content: %s
	grant: [%s]
}
`, charm, charm, otherRef, content, grant)
	path := filepath.Join(dir, "env.cue")
	if err := os.WriteFile(path, []byte(env), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// unitDirFile reads a file the charm keeps in unit's directory, trimmed.
func unitDirFile(data, unit, name string) string {
	b, _ := os.ReadFile(filepath.Join(data, "agent", "units", strings.ReplaceAll(unit, "/", "-"), name))
	return strings.TrimSpace(string(b))
}

// userSecretInfo is the user secret as `fixpoint secrets` lists it.
func userSecretInfo(t *testing.T, data string) *api.SecretInfo {
	t.Helper()
	res := fixpoint(t, time.Minute, "secrets", "-o", "json", "--data-dir", data)
	var list []*api.SecretInfo
	if res.code != 0 || json.Unmarshal([]byte(res.stdout), &list) != nil {
		t.Fatalf("secrets: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, s := range list {
		if s.Label == "db-pass" {
			return s
		}
	}
	t.Fatalf("secrets lists no db-pass:\n%s", res.stdout)
	return nil
}

func TestUserSecretsFromTheEnvironmentFile(t *testing.T) {
	t.Parallel()
	charm, err := filepath.Abs(repo("testdata", "secrets", "classic-secret-reader"))
	if err != nil {
		t.Fatal(err)
	}
	data, envs := t.TempDir(), t.TempDir()
	pass := filepath.Join(envs, "db.pass")
	if err := os.WriteFile(pass, []byte(userSecretValues[0]), 0o600); err != nil {
		t.Fatal(err)
	}
	fileOnly := `{password: file: "./db.pass"}`
	env := userSecretEnv(t, envs, charm, fileOnly, "", "")
	up := startUp(t, data, env)
	up.waitConverged(t, 10*time.Minute)
	id := model.UserSecretID("usersecrets", "db-pass")

	// The granted service reads the value through the URI its config
	// holds; the other one is refused.
	if got := unitDirFile(data, "sec-reader/0", "password.sha256"); got != sha(userSecretValues[0]) {
		t.Fatalf("sec-reader read a password of sha256 %q, want that of the file's; events:\n%s\nsecret-get: %s\nup:\n%s", got,
			unitDirFile(data, "sec-reader/0", "events.log"), unitDirFile(data, "sec-reader/0", "secret-get.err"), up.out)
	}
	if got := unitDirFile(data, "sec-other/0", "secret-get.err"); !strings.Contains(got, "not found") || unitDirFile(data, "sec-other/0", "password.sha256") != "" {
		t.Errorf("sec-other, not granted: secret-get said %q", got)
	}
	info := userSecretInfo(t, data)
	if info.ID != "secret:"+id || info.Owner != "user" || info.Revision != 1 || len(info.Grants) != 1 || info.Grants[0].To != "sec-reader" {
		t.Fatalf("secrets lists %+v", info)
	}

	// The same values again: nothing to do.
	if p := fixpoint(t, time.Minute, "plan", "-f", env, "--data-dir", data); p.code != 0 || !strings.Contains(p.stdout, "no changes") {
		t.Fatalf("plan with the same values: exit %d\n%s%s", p.code, p.stdout, p.stderr)
	}

	// Bad input: a clear error, nothing sent, nothing changed.
	for what, c := range map[string]struct{ content, otherRef, grant, says string }{
		"a missing file":       {`{password: file: "./missing.pass"}`, "", "", `secret db-pass key password: read file "./missing.pass"`},
		"an unset variable":    {`{password: env: "FIXPOINT_TEST_UNSET_VARIABLE"}`, "", "", "secret db-pass key password: environment variable \"FIXPOINT_TEST_UNSET_VARIABLE\" is not set"},
		"a bad key":            {`{PW: file: "./db.pass"}`, "", "", `secret key "PW"`},
		"an undeclared secret": {fileOnly, "nope", "", `names secret "nope", which the environment does not declare`},
		"an unknown grantee":   {fileOnly, "", `"sec-reader", "nosuch"`, `grants secret db-pass to "nosuch", which is not a service`},
	} {
		bad := filepath.Join(t.TempDir(), "bad")
		if err := os.MkdirAll(bad, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bad, "db.pass"), []byte(userSecretValues[1]), 0o600); err != nil {
			t.Fatal(err)
		}
		r := fixpoint(t, time.Minute, "apply", "-f", userSecretEnv(t, bad, charm, c.content, c.otherRef, c.grant), "--yes", "--data-dir", data)
		if r.code == 0 || !strings.Contains(r.stderr, c.says) || !strings.Contains(r.stderr, "env.cue:") || strings.Contains(r.stderr+r.stdout, userSecretValues[1]) {
			t.Errorf("apply with %s: exit %d, want an error saying %q\n%s%s", what, r.code, c.says, r.stdout, r.stderr)
		}
	}
	if info := userSecretInfo(t, data); info.Revision != 1 {
		t.Fatalf("a refused apply changed the secret: %+v", info)
	}

	// A new value, and a key read from a variable: a new revision, and
	// secret-changed on the consumer, which follows it.
	if err := os.WriteFile(pass, []byte(userSecretValues[1]), 0o600); err != nil {
		t.Fatal(err)
	}
	env = userSecretEnv(t, envs, charm, `{password: file: "./db.pass", username: env: "FIXPOINT_TEST_DB_USER"}`, "", "")
	vars := []string{"FIXPOINT_TEST_DB_USER=" + userSecretValues[2]}
	p := runFixpoint(t, time.Minute, "", vars, "plan", "-f", env, "--data-dir", data)
	if p.code != exitChanges || !strings.Contains(p.stdout, "~ secret db-pass new revision 2") {
		t.Fatalf("plan with a new value: exit %d\n%s%s", p.code, p.stdout, p.stderr)
	}
	a := runFixpoint(t, 11*time.Minute, "", vars, "apply", "-f", env, "--wait", "--timeout", "10m", "--data-dir", data)
	if a.code != 0 {
		t.Fatalf("apply with a new value: exit %d\n%s%s\nup:\n%s", a.code, a.stdout, a.stderr, up.out)
	}
	if got := unitDirFile(data, "sec-reader/0", "password.sha256"); got != sha(userSecretValues[1]) {
		t.Errorf("after the new revision sec-reader read sha256 %q; events:\n%s", got, unitDirFile(data, "sec-reader/0", "events.log"))
	}
	if log := unitDirFile(data, "sec-reader/0", "events.log"); !strings.Contains(log, "secret-changed secret:"+id) {
		t.Errorf("sec-reader got no secret-changed; events:\n%s", log)
	}
	if info := userSecretInfo(t, data); info.Revision != 2 {
		t.Errorf("after the new value: %+v", info)
	}
	if again := runFixpoint(t, time.Minute, "", vars, "plan", "-f", env, "--data-dir", data); again.code != 0 {
		t.Errorf("plan after the apply: exit %d\n%s%s", again.code, again.stdout, again.stderr)
	}

	// At rest and on screen: no value in the data dir (the Raft log,
	// snapshots, the agent's files: the charm records only a digest),
	// the logs, debug-log, the status or the plans.
	screens := map[string][]byte{"plan": []byte(p.stdout + p.stderr), "apply": []byte(a.stdout + a.stderr)}
	screens["logs"] = []byte(fixpoint(t, time.Minute, "logs", "--data-dir", data).stdout)
	screens["debug-log"] = []byte(fixpoint(t, time.Minute, "debug-log", "--replay", "--data-dir", data).stdout)
	screens["status"] = []byte(fixpoint(t, time.Minute, "status", "-o", "json", "--data-dir", data).stdout)
	screens["up"] = []byte(up.out.String())
	backup := filepath.Join(t.TempDir(), "backup.json")
	if b := fixpoint(t, time.Minute, "cluster", "snapshot", "save", backup, "--data-dir", data); b.code != 0 {
		t.Fatalf("snapshot save: %s %s", b.stdout, b.stderr)
	}
	screens["backup"], _ = os.ReadFile(backup)
	err = filepath.WalkDir(data, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			screens[path], err = os.ReadFile(path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for where, b := range screens {
		for _, v := range userSecretValues {
			if bytes.Contains(b, []byte(v)) {
				t.Errorf("%s holds user secret value %s in plaintext", where, v)
			}
		}
	}

	// Removed from the environment: removed, and sec-reader is refused.
	if err := os.WriteFile(env, []byte(fmt.Sprintf(`apiVersion: "fixpoint/v1"
name: "usersecrets"
services: "sec-reader": {charm: %q}
`, charm)), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := fixpoint(t, 11*time.Minute, "apply", "-f", env, "--yes", "--wait", "--timeout", "10m", "--data-dir", data); r.code != 0 || !strings.Contains(r.stdout, "- secret db-pass (secret:"+id+")") {
		t.Fatalf("apply without the secret: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	res := fixpoint(t, time.Minute, "secrets", "-o", "json", "--data-dir", data)
	if strings.Contains(res.stdout, id) {
		t.Errorf("the removed secret is still listed:\n%s", res.stdout)
	}
}

// TestClusterUserSecretsThroughFollowers applies user secrets through
// followers of a three-server cluster over TLS: the follower that takes
// the request compares and seals with the cluster key it got at its join,
// the granted unit reads the value, the same values again change nothing,
// and no server's data dir holds a value.
func TestClusterUserSecretsThroughFollowers(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts four processes; skipped in -short")
	}
	charm, err := filepath.Abs(repo("testdata", "secrets", "classic-secret-reader"))
	if err != nil {
		t.Fatal(err)
	}
	c := startCluster(t, 3, true)
	c.agent("m1")
	c.waitMachines("m1")
	envs := t.TempDir()
	pass := filepath.Join(envs, "db.pass")
	values := []string{"cluster-user-secret-v1-9d3a", "cluster-user-secret-v2-61fe"}
	if err := os.WriteFile(pass, []byte(values[0]), 0o600); err != nil {
		t.Fatal(err)
	}
	env := userSecretEnv(t, envs, charm, `{password: file: "./db.pass"}`, "", "")
	leader := c.waitLeader("a Raft leader", -1)
	follower := (leader + 1) % 3
	apply := func(via int) run {
		t.Helper()
		r := c.cliIn(via, "apply", "-f", env, "--yes", "--wait", "--timeout", "4m")
		if r.code != 0 {
			t.Fatalf("apply through n%d: exit %d\n%s%s", via+1, r.code, r.stdout, r.stderr)
		}
		return r
	}
	password := func() string {
		b, _ := os.ReadFile(filepath.Join(c.agentDirs["m1"], "units", "sec-reader-0", "password.sha256"))
		return strings.TrimSpace(string(b))
	}
	apply(follower)
	if got := password(); got != sha(values[0]) {
		t.Fatalf("sec-reader read sha256 %q after the apply through a follower", got)
	}
	if r := apply((leader + 2) % 3); !strings.Contains(r.stdout, "environment unchanged") {
		t.Errorf("the same values through the other follower:\n%s", r.stdout)
	}
	if err := os.WriteFile(pass, []byte(values[1]), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := apply(follower); !strings.Contains(r.stdout, "~ secret db-pass new revision 2") {
		t.Errorf("a new value through a follower:\n%s", r.stdout)
	}
	if got := password(); got != sha(values[1]) {
		t.Errorf("sec-reader read sha256 %q after the new value", got)
	}
	for i, dir := range c.dirs {
		_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			b, _ := os.ReadFile(path)
			for _, v := range values {
				if bytes.Contains(b, []byte(v)) {
					t.Errorf("n%d: %s holds %s in plaintext", i+1, path, v)
				}
			}
			return nil
		})
	}
}
