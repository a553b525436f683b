package schemas

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// write creates files under dir from name → content.
func write(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLoadEnvironmentUnifiesADirectory(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"a.cue": `apiVersion: "fixpoint/v1"
name:       "shop"
services: {
	db:  {charm: "./charms/db", units: 3, config: {max_connections: 200, ratio: 0.5, debug: true, mode: "fast", one: 1.0}}
	web: {charm: "./charms/web", units: 2, placement: ["m1", "m2"]}
}
`,
		"b.cue": `services: log: {charm: "./charms/logship"}
relations: {
	"web-db":  ["web:db", "db:db"]
	"web-log": ["web:juju-info", "log:host"]
}
`,
		"_ignored.cue": `this is not CUE`,
	})
	env, err := LoadEnvironment(dir)
	if err != nil {
		t.Fatal(err)
	}
	e := env.Env
	if e.APIVersion != "fixpoint/v1" || e.Name != "shop" || len(e.Services) != 3 || len(e.Relations) != 2 {
		t.Fatalf("decoded %+v", e)
	}
	if env.Dir != dir {
		t.Errorf("Dir = %q, want %q", env.Dir, dir)
	}
	db := e.Services["db"]
	if db.Units == nil || *db.Units != 3 {
		t.Errorf("db units = %v", db.Units)
	}
	if e.Services["log"].Units != nil {
		t.Errorf("log units = %v, want unset so that Resolve picks the default", *e.Services["log"].Units)
	}
	// Numbers keep their kind: ints decode as int64, floats as float64.
	if v, ok := db.Config["max_connections"].(int64); !ok || v != 200 {
		t.Errorf("max_connections = %#v", db.Config["max_connections"])
	}
	if v, ok := db.Config["ratio"].(float64); !ok || v != 0.5 {
		t.Errorf("ratio = %#v", db.Config["ratio"])
	}
	if v, ok := db.Config["one"].(float64); !ok || v != 1 {
		t.Errorf("one = %#v, want float64 1", db.Config["one"])
	}
	if v, ok := db.Config["debug"].(bool); !ok || !v {
		t.Errorf("debug = %#v", db.Config["debug"])
	}
	if got := e.Relations["web-log"]; len(got) != 2 || got[1] != "log:host" {
		t.Errorf("web-log = %v", got)
	}
	if got := strings.Join(e.Services["web"].Placement, ","); got != "m1,m2" {
		t.Errorf("placement = %q", got)
	}

	a := filepath.Join(dir, "a.cue")
	for _, c := range []struct {
		path []string
		want string
	}{
		{[]string{"services", "db", "config", "max_connections"}, a + ":4:49"},
		{[]string{"services", "db", "config", "nosuch"}, a + ":4:40"}, // nearest parent
		{[]string{"relations", "web-log", "1"}, filepath.Join(dir, "b.cue") + ":4:31"},
		{[]string{"services", "web", "placement", "1"}, a + ":5:59"},
	} {
		if got := env.Pos(c.path); !strings.HasSuffix(got, rel(c.want)) || got == "" {
			t.Errorf("Pos(%v) = %q, want %q", c.path, got, rel(c.want))
		}
	}
}

func TestLoadEnvironmentFilesAndPackages(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"a.cue":     "package shop\napiVersion: \"fixpoint/v1\"\n",
		"b.cue":     "package shop\nservices: web: charm: \"./web\"\n",
		"other.cue": "package other\nname: \"x\"\n",
	})
	env, err := LoadEnvironment(filepath.Join(dir, "a.cue"), filepath.Join(dir, "b.cue"))
	if err != nil {
		t.Fatal(err)
	}
	if env.Env.Services["web"].Charm != "./web" {
		t.Errorf("decoded %+v", env.Env)
	}
	// A directory whose files disagree on the package is refused by name.
	_, err = LoadEnvironment(dir)
	if err == nil || !strings.Contains(err.Error(), "package other") || !strings.Contains(err.Error(), "package shop") {
		t.Errorf("mixed packages: err = %v", err)
	}
	// Files of one environment share a directory.
	other := t.TempDir()
	write(t, other, map[string]string{"c.cue": "name: \"x\"\n"})
	if _, err := LoadEnvironment(filepath.Join(dir, "a.cue"), filepath.Join(other, "c.cue")); err == nil || !strings.Contains(err.Error(), "share a directory") {
		t.Errorf("two directories: err = %v", err)
	}
	if _, err := LoadEnvironment(filepath.Join(dir, "nope.cue")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: err = %v", err)
	}
}

func TestUserFilesCanImportTheSchemas(t *testing.T) {
	for _, withModule := range []bool{false, true} {
		dir := t.TempDir()
		files := map[string]string{
			"env.cue": `import "fixpoint.dev/schemas"

apiVersion: "fixpoint/v1"
_small: schemas.#Service & {units: 1}
services: {
	web: _small & {charm: "./web"}
	db:  _small & {charm: "./db", colour: "red"}
}
`,
		}
		if withModule {
			// The user's own module: only the schemas are overlaid.
			files["cue.mod/module.cue"] = "module: \"example.com/shop\"\nlanguage: version: \"v0.17.0\"\n"
		}
		write(t, dir, files)
		_, err := LoadEnvironment(filepath.Join(dir, "env.cue"))
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("module=%v: err = %v, want *Error", withModule, err)
		}
		// The imported definition is closed, so the typo is caught, and
		// reported in the user's file rather than the schema.
		if got := err.Error(); !strings.Contains(got, "env.cue:7:32: services.db.colour: unknown field \"colour\"") {
			t.Errorf("module=%v: err = %v", withModule, got)
		}
		write(t, dir, map[string]string{"env.cue": strings.Replace(files["env.cue"], `, colour: "red"`, "", 1)})
		env, err := LoadEnvironment(dir)
		if err != nil {
			t.Fatalf("module=%v: %v", withModule, err)
		}
		if u := env.Env.Services["db"].Units; u == nil || *u != 1 {
			t.Errorf("module=%v: db units = %v", withModule, u)
		}
	}
}

func TestLoadEnvironmentReportsEveryProblem(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"env.cue": `apiVersion: "fixpoint/v2"
name: "shop"
services: {
	db: {charm: "./charms/db", units: -3, config: {max: 200, bad: {x: 1}}}
	web: {charm: "./charms/web", units: "two", colour: "red", placement: "m1"}
	api: {units: 2, chram: "x"}
}
relations: {
	"web-db": ["web:db", "db:db", "x"]
	"x": ["WEB", "db"]
	y: {a: "b"}
}
extra: 1
`})
	_, err := LoadEnvironment(filepath.Join(dir, "env.cue"))
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want *Error", err, err)
	}
	f := rel(filepath.Join(dir, "env.cue"))
	want := []string{
		f + `:1:13: apiVersion: apiVersion must be "fixpoint/v1"`,
		f + `:4:36: services.db.units: units must be a whole number, 0 or more`,
		f + `:4:59: services.db.config.bad: is a struct {...} but must be a string, a number or true or false: config sets charm options`,
		f + `:5:38: services.web.units: units must be a whole number`,
		f + `:5:45: services.web.colour: unknown field "colour"; allowed here: charm, units, config, placement`,
		f + `:5:60: services.web.placement: is a string but must be a list [...]: placement pins units`,
		f + `:6:2: services.api.charm: is missing: charm is the charm's directory`,
		f + `:6:18: services.api.chram: unknown field "chram" (did you mean "charm"?)`,
		f + `:9:2: relations."web-db": has 3 entries but must have 2: `,
		f + `:10:8: relations.x.0: an endpoint is written "service:endpoint" or "service"`,
		f + `:11:2: relations.y: is a struct {...} but must be a list [...]`,
		f + `:13:1: extra: unknown field "extra"; allowed here: apiVersion, name, services, relations`,
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

func TestLoadEnvironmentSyntaxError(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"env.cue": "apiVersion: \"fixpoint/v1\"\nservices: {\n\tweb: {charm: \"x\",, units: 1}\n}\n"})
	_, err := LoadEnvironment(dir)
	if err == nil || !strings.HasPrefix(err.Error(), rel(filepath.Join(dir, "env.cue"))+":3:19: expected operand, found ','") {
		t.Errorf("err = %v", err)
	}
}
