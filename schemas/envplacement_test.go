package schemas

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestEnvironmentPlacementDecodes(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"env.cue": `apiVersion: "fixpoint/v1"
name: "shop"
placement: labels: {zone: "a", disk: "ssd"}
services: web: {charm: "./charms/web"}
`})
	env, err := LoadEnvironment(filepath.Join(dir, "env.cue"))
	if err != nil {
		t.Fatal(err)
	}
	p := env.Env.Placement
	if p == nil || len(p.Machines) != 0 || len(p.Labels) != 2 || p.Labels["zone"] != "a" || p.Labels["disk"] != "ssd" {
		t.Fatalf("placement = %+v", p)
	}
}

func TestEnvironmentPlacementProblemsAtTheirLines(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"env.cue": `apiVersion: "fixpoint/v1"
name: "shop"
placement: {
	machines: "m1"
	labels: {zone: 1}
	zones: ["a"]
}
services: web: {charm: "./charms/web"}
`})
	_, err := LoadEnvironment(filepath.Join(dir, "env.cue"))
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want *Error", err, err)
	}
	f := rel(filepath.Join(dir, "env.cue"))
	want := []string{
		f + `:4:2: placement.machines: is a string but must be a list`,
		f + `:5:17: placement.labels.zone: `,
		f + `:6:2: placement.zones: unknown field "zones"`,
	}
	if len(e.Problems) != len(want) {
		t.Errorf("got %d problems, want %d:\n%v", len(e.Problems), len(want), err)
	}
	for i, w := range want {
		if i < len(e.Problems) && !strings.HasPrefix(e.Problems[i].String(), w) {
			t.Errorf("problem %d:\n got %s\nwant %s...", i, e.Problems[i], w)
		}
	}
}
