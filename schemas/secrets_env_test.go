package schemas

import (
	"strings"
	"testing"
)

func TestLoadEnvironmentUserSecrets(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"env.cue": `apiVersion: "fixpoint/v1"
name: "shop"
services: web: {charm: "./charms/web", config: dbpass: "secret:db-pass"}
secrets: "db-pass": {
	description: "the database password"
	content: {password: file: "./db.pass", username: env: "DB_USER"}
	grant: ["web"]
}
`})
	env, err := LoadEnvironment(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := env.Env.Secrets["db-pass"]
	if s.Description != "the database password" || s.Content["password"].File != "./db.pass" || s.Content["username"].Env != "DB_USER" || strings.Join(s.Grant, ",") != "web" {
		t.Fatalf("decoded %+v", s)
	}
}

// A value written into the CUE is refused: the environment says where a
// value is, never what.
func TestLoadEnvironmentRefusesASecretValue(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"env.cue": `apiVersion: "fixpoint/v1"
services: web: {charm: "./charms/web"}
secrets: "db-pass": content: password: "hunter2"
`})
	_, err := LoadEnvironment(dir)
	if err == nil || !strings.Contains(err.Error(), "env.cue:3:") || !strings.Contains(err.Error(), `secrets."db-pass".content.password`) || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("LoadEnvironment = %v", err)
	}
}

// TestLoadEnvironmentCredential: the cloud credential and a service's
// trust, as Juju's deploy --trust, decode; a credential without its
// secret is refused at its line.
func TestLoadEnvironmentCredential(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"env.cue": `apiVersion: "fixpoint/v1"
services: app: {charm: "./charms/app", trust: true}
secrets: cloud: content: {"client-cert": file: "./cert.pem", "client-key": env: "CLOUD_KEY"}
credential: {type: "lxd", name: "localhost", endpoint: "https://10.0.0.1:8443", auth_type: "certificate", secret: "cloud"}
`})
	env, err := LoadEnvironment(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := env.Env.Credential
	if !env.Env.Services["app"].Trust || c == nil || c.Type != "lxd" || c.Name != "localhost" || c.Endpoint != "https://10.0.0.1:8443" || c.AuthType != "certificate" || c.Secret != "cloud" {
		t.Fatalf("decoded trust %v, credential %+v", env.Env.Services["app"].Trust, c)
	}
	write(t, dir, map[string]string{"env.cue": `apiVersion: "fixpoint/v1"
services: app: {charm: "./charms/app", trust: true}
credential: {type: "manual", name: "fixpoint", auth_type: "empty"}
`})
	// A credential without attributes (a manual cloud's) names no secret.
	env, err = LoadEnvironment(dir)
	if err != nil || env.Env.Credential == nil || env.Env.Credential.Secret != "" || env.Env.Credential.AuthType != "empty" {
		t.Fatalf("a credential without attributes: %v", err)
	}
}
