package model

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/raftstore/keyring"
)

// secretCharms are the fixture charms with a secret option on web.
func secretCharms() map[string]*Charm {
	cs := charms()
	cs["h-web"].Meta.Options = map[string]Option{"dbpass": {Type: SecretType}}
	return cs
}

// secretEnv declares user secret db-pass, granted to web, whose URI web's
// dbpass option takes.
func secretEnv() *Environment {
	e := env(nil)
	web := e.Services["web"]
	web.Config = map[string]any{"dbpass": "secret:db-pass"}
	e.Services["web"] = web
	e.Secrets = map[string]UserSecretSpec{"db-pass": {
		Description: "the database password",
		Content:     map[string]SecretSource{"password": {File: "./db.pass"}, "username": {Env: "DB_USER"}},
		Grant:       []string{"web"},
	}}
	return e
}

func TestUserSecretIDIsDerivedFromEnvironmentAndName(t *testing.T) {
	id := UserSecretID("shop", "db-pass")
	if err := CheckSecretID(id); err != nil {
		t.Fatalf("UserSecretID = %q: %v", id, err)
	}
	if UserSecretID("shop", "db-pass") != id || UserSecretID("shop", "db-pass2") == id || UserSecretID("shop2", "db-pass") == id {
		t.Fatal("a user secret's id is a function of exactly the environment's name and the secret's name")
	}
}

func TestUserSecretConfigResolvesToItsURI(t *testing.T) {
	d, err := Resolve(secretEnv(), secretCharms())
	if err != nil {
		t.Fatal(err)
	}
	want := "secret:" + UserSecretID("shop", "db-pass")
	if got := d.Services["web"].Config["dbpass"]; got != want {
		t.Fatalf("dbpass = %v, want %s", got, want)
	}
	ds := d.Secrets["db-pass"]
	if ds == nil || ds.ID != strings.TrimPrefix(want, "secret:") || strings.Join(ds.Grants, ",") != "web" {
		t.Fatalf("desired secret = %+v", ds)
	}
	// A plain secret string and a secret URI pass as written.
	for _, v := range []string{"hunter2", "secret:cn0gqa6qs7s1bm0kfp8g"} {
		e := secretEnv()
		e.Services["web"].Config["dbpass"] = v
		d, err := Resolve(e, secretCharms())
		if err != nil || d.Services["web"].Config["dbpass"] != v {
			t.Fatalf("dbpass %q: %v, %v", v, d, err)
		}
	}
}

func TestUserSecretBadDeclarations(t *testing.T) {
	for name, c := range map[string]struct {
		edit func(e *Environment)
		want string
	}{
		"bad key": {func(e *Environment) {
			e.Secrets["db-pass"].Content["PW"] = SecretSource{File: "x"}
		}, `secrets.db-pass.content.PW: secret key "PW"`},
		"two sources": {func(e *Environment) {
			e.Secrets["db-pass"].Content["password"] = SecretSource{File: "x", Env: "Y"}
		}, "secrets.db-pass.content.password: give exactly one source"},
		"no source": {func(e *Environment) {
			e.Secrets["db-pass"].Content["password"] = SecretSource{}
		}, "secrets.db-pass.content.password: give exactly one source"},
		"bad variable": {func(e *Environment) {
			e.Secrets["db-pass"].Content["password"] = SecretSource{Env: "1X"}
		}, `environment variable "1X"`},
		"grant unknown": {func(e *Environment) {
			s := e.Secrets["db-pass"]
			s.Grant = []string{"web", "nosuch"}
			e.Secrets["db-pass"] = s
		}, `secrets.db-pass.grant.1: grants secret db-pass to "nosuch", which is not a service of this environment`},
		"bad name": {func(e *Environment) {
			e.Secrets["Db"] = e.Secrets["db-pass"]
		}, "secrets.Db: secret name"},
		"undeclared": {func(e *Environment) {
			e.Services["web"].Config["dbpass"] = "secret:nosuch"
		}, `services.web.config.dbpass: option "dbpass" of charm web names secret "nosuch", which the environment does not declare under secrets (declared: db-pass)`},
	} {
		t.Run(name, func(t *testing.T) {
			e := secretEnv()
			c.edit(e)
			_, err := Resolve(e, secretCharms())
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Resolve = %v, want %q", err, c.want)
			}
		})
	}
}

// deploySecrets is a deploy of e whose user secrets' values are values,
// revised against s as the node that takes the request does.
func deploySecrets(t *testing.T, s *State, e *Environment, values map[string]map[string]string) *Command {
	t.Helper()
	revs, err := ReviseUserSecrets(s, e, values)
	if err != nil {
		t.Fatal(err)
	}
	return &Command{Op: OpDeploy, Deploy: &Deploy{Env: *e, Charms: secretCharms(), SecretRevisions: revs}}
}

func kinds(changes []Change) string {
	var out []string
	for _, c := range changes {
		out = append(out, c.String())
	}
	return strings.Join(out, "\n")
}

func TestUserSecretRevisionsGrantsAndRemoval(t *testing.T) {
	kr, err := keyring.NewMemoryKeyring()
	if err != nil {
		t.Fatal(err)
	}
	s := NewState()
	s.SetSealer(kr)
	values := map[string]map[string]string{"db-pass": {"password": "pw-one-xyzzy", "username": "admin"}}
	resp := apply(t, s, 1, deploySecrets(t, s, secretEnv(), values))
	id := UserSecretID("shop", "db-pass")
	plan := kinds(resp.Changes)
	if !strings.Contains(plan, "+ secret db-pass (secret:"+id+", revision 1)") || !strings.Contains(plan, "+ grant secret db-pass to web") {
		t.Fatalf("first deploy:\n%s", plan)
	}
	sec := s.Secrets[id]
	if sec == nil || sec.OwnerKind != SecretOwnerUser || sec.Label != "db-pass" || sec.Latest() != 1 || !s.SecretSees(sec, "web/0", "web") || s.SecretSees(sec, "db/0", "db") {
		t.Fatalf("secret = %+v", sec)
	}
	if got, err := s.OpenRevision(sec, 1); err != nil || got["password"] != "pw-one-xyzzy" {
		t.Fatalf("revision 1 = %v, %v", got, err)
	}
	// The log holds the sealed revision only.
	fresh := NewState()
	fresh.SetSealer(kr)
	data, _ := json.Marshal(deploySecrets(t, fresh, secretEnv(), values))
	if strings.Contains(string(data), "pw-one-xyzzy") {
		t.Fatal("a deploy command holds a user secret's value")
	}

	// The same values again: nothing changes.
	cmd := deploySecrets(t, s, secretEnv(), values)
	if len(cmd.Deploy.SecretRevisions) != 0 {
		t.Fatalf("unchanged values made revisions %v", cmd.Deploy.SecretRevisions)
	}
	desired, err := cmd.Check()
	if err != nil {
		t.Fatal(err)
	}
	if changes := Plan(s, desired); len(changes) != 0 {
		t.Fatalf("unchanged values planned:\n%s", kinds(changes))
	}

	// web/0 tracks revision 1; a new value is revision 2, and revision 1
	// is kept while tracked.
	c := sec.copy()
	c.Consumers = map[string]SecretConsumer{"web/0": {Tracked: 1}}
	s.putSecret(id, c)
	values["db-pass"]["password"] = "pw-two-xyzzy"
	resp = apply(t, s, 3, deploySecrets(t, s, secretEnv(), values))
	if plan := kinds(resp.Changes); plan != "~ secret db-pass new revision 2" {
		t.Fatalf("new value:\n%s", plan)
	}
	if sec = s.Secrets[id]; sec.Latest() != 2 || sec.Revision(1) == nil {
		t.Fatalf("revisions = %+v", sec.Revisions)
	}
	// Once nobody tracks revision 1, the next revision prunes it.
	c = sec.copy()
	c.Consumers = map[string]SecretConsumer{"web/0": {Tracked: 2}}
	s.putSecret(id, c)
	values["db-pass"]["password"] = "pw-three-xyzzy"
	apply(t, s, 4, deploySecrets(t, s, secretEnv(), values))
	if sec = s.Secrets[id]; sec.Latest() != 3 || sec.Revision(1) != nil || sec.Revision(2) == nil {
		t.Fatalf("revisions = %+v", sec.Revisions)
	}

	// The grant follows the list: revoked, web's consumers go.
	e := secretEnv()
	spec := e.Secrets["db-pass"]
	spec.Grant = []string{"db"}
	e.Secrets["db-pass"] = spec
	resp = apply(t, s, 5, deploySecrets(t, s, e, values))
	if plan := kinds(resp.Changes); plan != "+ grant secret db-pass to db\n- grant secret db-pass from web (revoked)" {
		t.Fatalf("regrant:\n%s", plan)
	}
	if sec = s.Secrets[id]; s.SecretSees(sec, "web/0", "web") || !s.SecretSees(sec, "db/0", "db") || len(sec.Consumers) != 0 {
		t.Fatalf("after regrant: %+v", sec)
	}

	// Removed from the environment: removed, and the plan says so.
	e = secretEnv()
	e.Secrets = nil
	delete(e.Services["web"].Config, "dbpass")
	resp = apply(t, s, 6, deploySecrets(t, s, e, nil))
	if plan := kinds(resp.Changes); !strings.Contains(plan, "- secret db-pass (secret:"+id+")") || !resp.Changes[len(resp.Changes)-1].Removes() {
		t.Fatalf("removal:\n%s", plan)
	}
	if s.Secrets[id] != nil {
		t.Fatal("a removed user secret stays")
	}
}

func TestUserSecretValuesMustFitTheDeclaration(t *testing.T) {
	kr, err := keyring.NewMemoryKeyring()
	if err != nil {
		t.Fatal(err)
	}
	s := NewState()
	s.SetSealer(kr)
	for name, c := range map[string]struct {
		values map[string]map[string]string
		want   string
	}{
		"none":        {nil, "secret db-pass: the request carries no content for it"},
		"key missing": {map[string]map[string]string{"db-pass": {"password": "x"}}, "secret db-pass: no value sent for key username"},
		"extra key":   {map[string]map[string]string{"db-pass": {"password": "x", "username": "y", "other": "z"}}, `a value sent for key "other"`},
		"undeclared":  {map[string]map[string]string{"db-pass": {"password": "x", "username": "y"}, "nope": {"abc": "x"}}, `secret "nope": content sent for a secret the environment does not declare`},
		"too much":    {map[string]map[string]string{"db-pass": {"password": "x", "username": "y"}, "a": {"abc": strings.Repeat("v", MaxUserSecretBytes)}}, "the limit is"},
		"too long":    {map[string]map[string]string{"db-pass": {"password": strings.Repeat("v", MaxSecretValue+1), "username": "y"}}, "secret db-pass: secret key password: value of"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ReviseUserSecrets(s, secretEnv(), c.values)
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "vvvv") {
				t.Fatalf("ReviseUserSecrets = %v, want %q", err, c.want)
			}
		})
	}
	// A new secret without a revision is refused: the FSM never creates
	// a secret without content.
	cmd := &Command{Op: OpDeploy, Deploy: &Deploy{Env: *secretEnv(), Charms: secretCharms()}}
	if _, err := s.Apply(1, cmd); err == nil || !strings.Contains(err.Error(), "carries no content") {
		t.Fatalf("deploy without content: %v", err)
	}
	// A revision of a secret the environment does not declare is refused.
	cmd.Deploy.SecretRevisions = map[string]string{"nope": "fp1.x"}
	if _, err := cmd.Check(); err == nil || !strings.Contains(err.Error(), "does not declare") {
		t.Fatalf("stray revision: %v", err)
	}
}
