package main

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// deploy --config takes KEY=VALUE as written and YAML files typed, flat
// or Juju's {SERVICE: {...}}; a pair wins over a file.
func TestDeployConfigArgs(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"flat.yaml": "port: 8080\ndebug: true\nname: shop\n",
		"juju.yaml": "web:\n  ratio: 0.5\n  port: 9090\n",
	})
	set, raw, err := readConfigArgs([]string{filepath.Join(dir, "juju.yaml"), "port=7000", "title=a=b"}, filepath.Join(dir, "flat.yaml"), "web")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"debug": true, "name": "shop", "ratio": 0.5}; !reflect.DeepEqual(set, want) {
		t.Errorf("typed values %#v, want %#v", set, want)
	}
	if want := map[string]string{"port": "7000", "title": "a=b"}; !reflect.DeepEqual(raw, want) {
		t.Errorf("written values %#v, want %#v", raw, want)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"=1"}, `--config "=1": write KEY=VALUE`},
		{[]string{filepath.Join(dir, "none.yaml")}, "config file: stat"},
	} {
		if _, _, err := readConfigArgs(tc.args, "", "web"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
	writeFiles(t, dir, map[string]string{"list.yaml": "- a\n- b\n"})
	if _, err := readConfigFile(filepath.Join(dir, "list.yaml"), "web"); err == nil || !strings.Contains(err.Error(), "write a YAML map of options") {
		t.Errorf("a YAML list as config: %v", err)
	}
}
