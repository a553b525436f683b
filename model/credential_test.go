package model

import (
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/raftstore/keyring"
)

// credEnv is secretEnv with a credential whose attributes are the user
// secret "cloud", and db trusted.
func credEnv() *Environment {
	e := secretEnv()
	e.Secrets["cloud"] = UserSecretSpec{Content: map[string]SecretSource{"client-cert": {Env: "CERT"}, "client-key": {Env: "KEY"}}}
	e.Credential = &CredentialSpec{Type: "lxd", Name: "localhost", AuthType: "certificate", Secret: "cloud"}
	db := e.Services["db"]
	db.Trust = true
	e.Services["db"] = db
	return e
}

// TestCredentialForTrustedServices: a trusted service reads the credential
// and is granted its secret; an untrusted one reads neither; trust and the
// credential are planned and applied as changes, values never shown.
func TestCredentialForTrustedServices(t *testing.T) {
	kr, err := keyring.NewMemoryKeyring()
	if err != nil {
		t.Fatal(err)
	}
	s := NewState()
	s.SetSealer(kr)
	values := map[string]map[string]string{"db-pass": {"password": "pw", "username": "admin"}, "cloud": {"client-cert": "CERT-xyzzy", "client-key": "KEY-xyzzy"}}
	resp := apply(t, s, 1, deploySecrets(t, s, credEnv(), values))
	plan := kinds(resp.Changes)
	if !strings.Contains(plan, "+ grant secret cloud to db") || !strings.Contains(plan, "~ credential none -> lxd cloud localhost (certificate)") || strings.Contains(plan, "xyzzy") {
		t.Fatalf("first deploy:\n%s", plan)
	}
	db0, web0 := s.Units["db/0"], s.Units["web/0"]
	cred := s.TrustedCredential(db0)
	if cred == nil || cred.SecretID != UserSecretID("shop", "cloud") || s.TrustedCredential(web0) != nil {
		t.Fatalf("credential of db/0 %+v, of web/0 %+v; want db's alone", cred, s.TrustedCredential(web0))
	}
	sec := s.Secrets[cred.SecretID]
	if !s.SecretSees(sec, "db/0", "db") || s.SecretSees(sec, "web/0", "web") {
		t.Errorf("the credential's secret is seen by db %v, web %v; want db alone", s.SecretSees(sec, "db/0", "db"), s.SecretSees(sec, "web/0", "web"))
	}

	// Trust moves to web: db loses the credential and its secret.
	e := credEnv()
	db, web := e.Services["db"], e.Services["web"]
	db.Trust, web.Trust = false, true
	e.Services["db"], e.Services["web"] = db, web
	resp = apply(t, s, 2, deploySecrets(t, s, e, values))
	plan = kinds(resp.Changes)
	for _, want := range []string{"~ service db trust true -> false", "~ service web trust false -> true", "+ grant secret cloud to web", "- grant secret cloud from db (revoked)"} {
		if !strings.Contains(plan, want) {
			t.Errorf("moving trust: plan lacks %q:\n%s", want, plan)
		}
	}
	if s.TrustedCredential(db0) != nil || s.TrustedCredential(web0) == nil {
		t.Error("after moving trust, db still reads the credential or web does not")
	}
}

func TestCredentialBadDeclarations(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Environment)
		want string
	}{
		{"trust without a credential", func(e *Environment) { e.Credential = nil }, "services.db.trust: service db is trusted, but the environment declares no credential"},
		{"an undeclared secret", func(e *Environment) { e.Credential.Secret = "nope" }, `credential.secret: names "nope", which is not a declared user secret`},
		{"no type", func(e *Environment) { e.Credential.Type = "" }, "credential.type: is required"},
		{"a control character", func(e *Environment) { e.Credential.Endpoint = "https://x\n" }, "credential.endpoint: at most 1024 printable bytes"},
	} {
		e := credEnv()
		c.edit(e)
		_, err := Resolve(e, charms())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.name, err, c.want)
		}
	}
}

// A credential without attributes (Juju's auth type "empty", a manual
// cloud's) names no secret: a trusted service reads its type and name.
func TestCredentialWithoutAttributes(t *testing.T) {
	e := env(nil)
	web := e.Services["web"]
	web.Trust = true
	e.Services["web"] = web
	e.Credential = &CredentialSpec{Type: "manual", Name: "fixpoint", AuthType: "empty"}
	d, err := Resolve(e, charms())
	if err != nil {
		t.Fatal(err)
	}
	if c := d.Credential; c == nil || c.Type != "manual" || c.SecretID != "" {
		t.Fatalf("credential %+v", c)
	}
	s := NewState()
	apply(t, s, 1, &Command{Op: OpDeploy, Deploy: &Deploy{Env: *e, Charms: charms()}})
	if c := s.TrustedCredential(s.Units["web/0"]); c == nil || c.Name != "fixpoint" || c.AuthType != "empty" {
		t.Fatalf("web/0 reads %+v", c)
	}
	if doc, err := s.SynthesizeDocument(); err != nil || doc.Credential == nil || doc.Credential.Secret != "" {
		t.Fatalf("document made from the state: %+v, %v", doc, err)
	}
}
