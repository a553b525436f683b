package legacy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// secretSession is a session on u with a hook running.
func secretSession(t testing.TB, u *charmapi.Universe) *session {
	t.Helper()
	s, err := newSession(u, nil, nil, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	s.begin("ctx", charmapi.Event{Hook: "config-changed"})
	return s
}

func runTool(t *testing.T, s *session, name string, args ...string) string {
	t.Helper()
	r := s.call(&request{Context: "ctx", Tool: name, Args: args})
	if r.Code != 0 {
		t.Fatalf("%s %v: exit %d: %s", name, args, r.Code, r.Stderr)
	}
	return r.Stdout
}

func TestSecretOwnerFlow(t *testing.T) {
	u := testUniverse()
	u.Leader = true
	s := secretSession(t, u)
	file := filepath.Join(t.TempDir(), "cert")
	if err := os.WriteFile(file, []byte("-----BEGIN-----"), 0o600); err != nil {
		t.Fatal(err)
	}
	uri := strings.TrimSpace(runTool(t, s, "secret-add", "--label", "db-pass", "--description", "the db password",
		"--rotate", "daily", "--expire", "2030-01-02T03:04:05Z", "password=s3cret", "tls-cert#file="+file, "extra#base64=aGVsbG8="))
	if _, err := model.ParseSecretURI(uri); err != nil || !strings.HasPrefix(uri, "secret:") {
		t.Fatalf("secret-add printed %q: %v", uri, err)
	}
	if got := runTool(t, s, "secret-get", "--label", "db-pass", "password"); got != "s3cret\n" {
		t.Errorf("secret-get by label = %q", got)
	}
	if got := runTool(t, s, "secret-get", uri, "--format=json"); got != `{"extra":"hello","password":"s3cret","tls-cert":"-----BEGIN-----"}`+"\n" {
		t.Errorf("secret-get json = %q", got)
	}
	runTool(t, s, "secret-set", uri, "password=n3w")
	runTool(t, s, "secret-set", uri, "password=n3wer", "--description", "rotated")
	var info map[string]map[string]any
	if err := json.Unmarshal([]byte(runTool(t, s, "secret-info-get", uri, "--format=json")), &info); err != nil {
		t.Fatal(err)
	}
	got := info[strings.TrimPrefix(uri, "secret:")]
	if got["revision"] != 1.0 || got["label"] != "db-pass" || got["owner"] != "application" || got["rotation"] != "daily" ||
		got["expiry"] != "2030-01-02T03:04:05Z" || got["description"] != "rotated" {
		t.Errorf("secret-info-get = %v (a new secret's sets in its own hook coalesce into revision 1)", info)
	}
	if ids := runTool(t, s, "secret-ids", "--format=json"); ids != `["`+uri+`"]`+"\n" {
		t.Errorf("secret-ids = %q", ids)
	}
	runTool(t, s, "secret-grant", uri, "-r", "db:3", "--unit", "db/1")
	res := s.result()
	if len(res.Secrets) != 2 || res.Secrets[0].Op != "add" || res.Secrets[0].Content["password"] != "n3wer" ||
		*res.Secrets[0].Description != "rotated" || res.Secrets[1].Op != "grant" || res.Secrets[1].Relation != "db:3" || res.Secrets[1].Unit != "db/1" {
		t.Errorf("result secrets = %+v", res.Secrets)
	}
}

func TestSecretConsumerTracksOnFirstRead(t *testing.T) {
	u := testUniverse()
	const uri = "secret:cn0gqa6qs7s1bm0kfp8g"
	u.Secrets = []charmapi.Secret{{ID: uri, Latest: 2, LatestContent: map[string]string{"password": "two"}}}
	s := secretSession(t, u)
	if got := runTool(t, s, "secret-get", uri, "--label", "mine", "password"); got != "two\n" {
		t.Errorf("first read = %q", got)
	}
	if got := runTool(t, s, "secret-get", "--label", "mine", "password"); got != "two\n" {
		t.Errorf("read by the consumer's label = %q", got)
	}
	res := s.result()
	if len(res.Secrets) != 1 || res.Secrets[0].Op != "track" || res.Secrets[0].Revision != 2 || *res.Secrets[0].Label != "mine" {
		t.Errorf("result = %+v", res.Secrets)
	}

	// Tracking 1 with 2 out: a plain read keeps 1, a peek shows 2, a
	// refresh moves to 2.
	u.Secrets = []charmapi.Secret{{ID: uri, Revision: 1, Latest: 2, Content: map[string]string{"password": "one"}, LatestContent: map[string]string{"password": "two"}}}
	s = secretSession(t, u)
	for _, c := range []struct {
		args []string
		want string
	}{{[]string{uri, "password"}, "one\n"}, {[]string{uri, "--peek", "password"}, "two\n"}, {[]string{uri, "password"}, "one\n"},
		{[]string{uri, "--refresh", "password"}, "two\n"}, {[]string{uri, "password"}, "two\n"}} {
		if got := runTool(t, s, "secret-get", c.args...); got != c.want {
			t.Errorf("secret-get %v = %q, want %q", c.args, got, c.want)
		}
	}
	if res := s.result(); len(res.Secrets) != 1 || res.Secrets[0].Revision != 2 {
		t.Errorf("after refresh: %+v", res.Secrets)
	}
}

func TestSecretToolErrors(t *testing.T) {
	u := testUniverse()
	const uri = "secret:cn0gqa6qs7s1bm0kfp8g"
	u.Secrets = []charmapi.Secret{{ID: uri, Owner: "application", Revision: 1, Latest: 1, Content: map[string]string{"password": "hunter22"}}}
	for _, c := range []struct {
		tool   string
		args   []string
		code   int
		stderr string
	}{
		{"secret-add", []string{"password=x"}, 1, "cannot create secret owned by the application: this unit is not the leader"},
		{"secret-add", []string{"--owner", "unit", "Bad_Key=x"}, 2, "keys are at least 3 characters"},
		{"secret-add", []string{"--owner", "unit", "password=" + strings.Repeat("x", model.MaxSecretValue+1)}, 2, "the limit is 8192"},
		{"secret-add", []string{"--owner", "unit", "--expire", "-1h", "password=x"}, 2, "negative expire duration"},
		{"secret-add", []string{"--owner", "unit", "--rotate", "sometimes", "password=x"}, 2, "rotate policy"},
		{"secret-set", []string{uri, "password=x"}, 1, "this unit is not the leader"},
		{"secret-get", []string{"secret:0000000000000000000v"}, 1, "not found"},
		{"secret-get", []string{uri, "--peek", "--refresh"}, 2, "not both"},
		{"secret-info-get", []string{uri, "--label", "x"}, 2, "not both"},
		{"secret-grant", []string{uri}, 1, "not the leader"},
	} {
		r := callIn(t, u, charmapi.Event{Hook: "install"}, c.tool, c.args...)
		if r.Code != c.code || !strings.Contains(r.Stderr, c.stderr) {
			t.Errorf("%s %v: exit %d %q; want %d and %q", c.tool, c.args, r.Code, r.Stderr, c.code, c.stderr)
		}
		if strings.Contains(r.Stderr, "hunter22") || strings.Contains(r.Stderr, "xxxxxxxx") {
			t.Errorf("%s %v: the error shows a secret value: %q", c.tool, c.args, r.Stderr)
		}
	}
}

// FuzzSecretTools feeds the secret tools arbitrary command lines: none
// may panic, no error shows a stored secret's value, and no change for
// the result carries content the model would refuse.
func FuzzSecretTools(f *testing.F) {
	f.Add(uint8(0), "--label\x00l\x00password=pw-value")
	f.Add(uint8(1), "secret:cn0gqa6qs7s1bm0kfp8g\x00--peek\x00password")
	f.Add(uint8(2), "secret:cn0gqa6qs7s1bm0kfp8g\x00password=pw-value")
	f.Add(uint8(3), "secret:cn0gqa6qs7s1bm0kfp8g\x00--revision\x001")
	f.Add(uint8(4), "secret:cn0gqa6qs7s1bm0kfp8g\x00-r\x00db:3\x00--unit\x00db/0")
	f.Add(uint8(5), "--expire\x002h\x00k#base64=cHctdmFsdWU=")
	f.Add(uint8(6), "--label\x00l")
	f.Add(uint8(7), "--format=json")
	names := []string{"secret-add", "secret-get", "secret-set", "secret-remove", "secret-grant", "secret-revoke", "secret-info-get", "secret-ids"}
	f.Fuzz(func(t *testing.T, which uint8, line string) {
		if len(line) > 4096 {
			return
		}
		u := testUniverse()
		u.Leader = which&8 != 0
		u.Secrets = []charmapi.Secret{{ID: "secret:cn0gqa6qs7s1bm0kfp8g", Owner: "application", Revision: 1, Latest: 1, Content: map[string]string{"password": "pw-value"}}}
		s := secretSession(t, u)
		args := strings.Split(line, "\x00")
		r := s.call(&request{Context: "ctx", Tool: names[int(which)%len(names)], Args: args})
		// The stored value, not one the command line itself carries.
		if r.Code != 0 && strings.Contains(r.Stderr, "pw-value") && !strings.Contains(line, "pw-value") {
			t.Errorf("%v: error shows a secret value: %q", args, r.Stderr)
		}
		res := s.result()
		for _, c := range res.Secrets {
			if c.Content != nil {
				if err := model.CheckSecretContent(c.Content); err != nil {
					t.Errorf("%v: a change with content the model refuses: %v", args, err)
				}
			}
		}
	})
}

// TestSecretRemoveAfterRevisionRemove is ops' secret lifecycle test: a
// hook adds a secret, removes its revision 1 and then the whole secret.
// Juju accepts the second remove; the result removes the secret once.
func TestSecretRemoveAfterRevisionRemove(t *testing.T) {
	u := testUniverse()
	u.Leader = true
	s := secretSession(t, u)
	uri := strings.TrimSpace(runTool(t, s, "secret-add", "--label", "l", "password=initial"))
	runTool(t, s, "secret-remove", uri, "--revision", "1")
	runTool(t, s, "secret-remove", uri)
	runTool(t, s, "secret-remove", uri, "--revision", "1")
	if r := s.call(&request{Context: "ctx", Tool: "secret-get", Args: []string{uri}}); r.Code != 1 || !strings.Contains(r.Stderr, "not found") {
		t.Errorf("secret-get of the removed secret: exit %d %q", r.Code, r.Stderr)
	}
	res := s.result()
	if len(res.Secrets) != 2 || res.Secrets[0].Op != model.SecretOpAdd || res.Secrets[1].Op != model.SecretOpRemove || res.Secrets[1].Revision != 1 {
		t.Errorf("result secrets = %+v; want the add and one remove of revision 1", res.Secrets)
	}

	// A secret of two revisions: the revision goes, then the secret.
	const id = "secret:cn0gqa6qs7s1bm0kfp8g"
	u.Secrets = []charmapi.Secret{{ID: id, Owner: "application", Revision: 2, Latest: 2, Revisions: []int{1, 2}, Content: map[string]string{"password": "two"}}}
	s = secretSession(t, u)
	runTool(t, s, "secret-remove", id, "--revision", "1")
	runTool(t, s, "secret-remove", id)
	res = s.result()
	if len(res.Secrets) != 2 || res.Secrets[0].Revision != 1 || res.Secrets[1].Revision != 0 {
		t.Errorf("result secrets = %+v; want remove of revision 1, then of the secret", res.Secrets)
	}
	// A secret the unit never had stays unknown.
	s = secretSession(t, u)
	if r := s.call(&request{Context: "ctx", Tool: "secret-remove", Args: []string{"secret:0000000000000000000v"}}); r.Code != 1 || !strings.Contains(r.Stderr, "not found") {
		t.Errorf("secret-remove of an unknown secret: exit %d %q", r.Code, r.Stderr)
	}
}

// TestHookcmdsSecretLifecycle is test_hookcmds.py's
// test_secret_full_lifecycle: canonical/operator's charm adds a secret,
// reads and updates it, and removes revision 1 and then the secret.
func TestHookcmdsSecretLifecycle(t *testing.T) {
	charm := conformanceCharm(t, "test_hookcmds")
	out := runHookcmdsAction(t, charm, hookcmdsUniverse(), "test-secret-crud", nil)
	for k, want := range map[string]string{"initial-label": "hookcmds-inttest", "initial-revision": "1", "initial-password": "initial-secret",
		"updated-password": "updated-secret", "updated-description": "Updated by hookcmds test", "label-lookup-password": "updated-secret"} {
		if out.Results[k] != want {
			t.Errorf("%s = %v; want %q", k, out.Results[k], want)
		}
	}
	if out.Writes == nil || len(out.Writes.Secrets) != 2 || out.Writes.Secrets[0].Op != model.SecretOpAdd || out.Writes.Secrets[1].Op != model.SecretOpRemove {
		t.Errorf("writes = %+v; want the secret added and removed", out.Writes)
	}
}
