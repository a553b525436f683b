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
