package charm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCharmcraftCharmWithJujuOnlyFeatures checks a charm written for
// charmcraft 3 (charmcraft.yaml only, no metadata.yaml) that declares
// actions, storage and a secret option: it loads with its actions, and
// vet's warnings name each other feature at its line.
func TestCharmcraftCharmWithJujuOnlyFeatures(t *testing.T) {
	root := t.TempDir()
	charmDir := filepath.Join(root, "charms", "craft")
	files := map[string]string{
		"charmcraft.yaml": `name: craft
type: charm
title: Craft
summary: a charmcraft 3 charm
description: long
base: ubuntu@24.04
platforms:
  amd64:
parts:
  charm:
    plugin: charm
provides:
  website:
    interface: http
storage:
  data:
    type: block
actions:
  backup:
    description: take a backup
config:
  options:
    port:
      type: int
      default: 8080
    password:
      type: secret
      description: the admin password's secret
`,
		"src/charm.py": "#!/usr/bin/python3\n",
	}
	for name, body := range files {
		p := filepath.Join(charmDir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := `apiVersion: "fixpoint/v1"
services: craft: {charm: "./charms/craft", config: {password: "secret:cn0gqa6qs7s1bm0kfp8g"}}
`
	if err := os.WriteFile(filepath.Join(root, "env.cue"), []byte(env), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Check(filepath.Join(root, "env.cue"))
	if err != nil {
		t.Fatal(err)
	}
	meta := c.Metas[charmDir]
	if meta == nil || meta.Name != "craft" || meta.Provides["website"].Interface != "http" || meta.Options["password"].Type != "secret" || meta.Options["port"].Type != "int" {
		t.Fatalf("meta = %+v", meta)
	}
	if got := c.Desired.Services["craft"].Config["password"]; got != "secret:cn0gqa6qs7s1bm0kfp8g" {
		t.Errorf("secret option value = %v", got)
	}
	var lines []string
	for _, w := range c.Warnings {
		lines = append(lines, w.String())
	}
	joined := strings.Join(lines, "\n")
	for _, want := range []string{
		"charmcraft.yaml:17: storage.data: storage of type block",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings:\n%s\nwant one containing %q", joined, want)
		}
	}
	if len(c.Warnings) != 1 {
		t.Errorf("%d warnings; want 1 (actions and secret options work, so they are not warned of):\n%s", len(c.Warnings), joined)
	}
	if a, ok := meta.Actions["backup"]; !ok || a.Description != "take a backup" {
		t.Errorf("actions = %+v; want charmcraft.yaml's backup", meta.Actions)
	}
}
