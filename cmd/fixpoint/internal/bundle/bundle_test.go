package bundle

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cuelang.org/go/cue/parser"

	"github.com/fixpoint/fixpoint/schemas"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// realBundles are the bundles fetched from Juju's and Canonical's
// repositories (testdata/bundles/README.md) that convert.
var realBundles = []string{
	"juju/basic-openstack.yaml",
	"juju/lxd-profile-bundle.yaml",
	"juju/telegraf_bundle.yaml",
	"juju/trusted_bundle.yaml",
	"charmed-kubernetes/bundle.yaml",
}

// bundlesDir is the repository's testdata/bundles.
const bundlesDir = "../../../../testdata/bundles"

// TestRealBundlesGolden converts each real bundle and compares the
// environment file and the warnings with the golden ones; each output
// loads as an environment (its schema holds; its charms are vet's).
func TestRealBundlesGolden(t *testing.T) {
	for _, b := range realBundles {
		t.Run(b, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(bundlesDir, b))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Convert(src, Options{File: "testdata/bundles/" + b})
			if err != nil {
				t.Fatal(err)
			}
			var warnings strings.Builder
			for _, w := range res.Warnings {
				warnings.WriteString(w.String() + "\n")
			}
			golden := filepath.Join("testdata", strings.NewReplacer("/", "_", ".yaml", "").Replace(b))
			compareGolden(t, golden+".cue", string(res.CUE))
			compareGolden(t, golden+".warnings", warnings.String())
			if env := load(t, res.CUE); len(env.Env.Services) == 0 {
				t.Errorf("no services")
			}
		})
	}
}

// load loads an environment file's contents as vet does, before the
// charms: its CUE parses and its schema holds.
func load(t *testing.T, cue []byte) *schemas.Env {
	t.Helper()
	file := filepath.Join(t.TempDir(), "env.cue")
	if err := os.WriteFile(file, cue, 0o644); err != nil {
		t.Fatal(err)
	}
	env, err := schemas.LoadEnvironment(file)
	if err != nil {
		t.Fatalf("the environment file does not load:\n%v\n%s", err, cue)
	}
	return env
}

func compareGolden(t *testing.T, name, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(name, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -update rewrites it); got:\n%s", name, got)
	}
}

func TestTelegrafBundle(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(bundlesDir, "juju/telegraf_bundle.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Convert(src, Options{File: "telegraf_bundle.yaml", Name: "metrics"})
	if err != nil {
		t.Fatal(err)
	}
	e := load(t, res.CUE).Env
	if e.Name != "metrics" || len(e.Services) != 3 || len(e.Relations) != 2 {
		t.Fatalf("environment %+v", e)
	}
	if s := e.Services["influxdb"]; s.Charm != "influxdb" || s.Units == nil || *s.Units != 1 {
		t.Errorf("influxdb %+v", s)
	}
	// No num_units: Juju deploys none.
	if s := e.Services["telegraf"]; s.Units == nil || *s.Units != 0 {
		t.Errorf("telegraf %+v", s)
	}
	if got := e.Relations["telegraf-influxdb"]; len(got) != 2 || got[0] != "telegraf:influxdb-api" || got[1] != "influxdb:query" {
		t.Errorf("relations %v", e.Relations)
	}
	for _, kept := range []string{"// channel: \"stable\"", "// revision: 24", "// to: [\"0\"]", "// constraints: \"arch=amd64\"", "// resources: foo-file: 2", "// machines: {\"0\":{},\"1\":{}}"} {
		if !strings.Contains(string(res.CUE), kept) {
			t.Errorf("%q is not kept as a comment", kept)
		}
	}
	named := map[string]bool{}
	for _, w := range res.Warnings {
		for _, k := range []string{"channel", "revision", "to", "constraints", "resource foo-file", "machines", "default-base"} {
			if strings.Contains(w.Msg, k+" ") {
				named[k] = true
			}
		}
	}
	if len(named) != 7 {
		t.Errorf("warnings name %v; want all 7 kept things", named)
	}
}

func TestConvertValues(t *testing.T) {
	src := `
applications:
  web:
    charm: cs:~me/focal/wordpress-12
    num_units: 2
    options:
      yaml11: yes
      quoted: "yes"
      whole: 0x10
      ratio: 2.0
      text: "line one\nline two"
      motd: include-file://motd.txt
      key: include-base64://motd.txt
      nothing:
    resources:
      theme: ./files/theme.tgz
    storage:
      data: ebs,10G,2
      logs: 3
      cache: 5G
  "db":
    charm: ../charms/postgresql
    num_units: 1
relations:
- [web, db]
- ["web:cache", "db:cache"]
`
	res, err := Convert([]byte(src), Options{
		File:     "b/bundle.yaml",
		Rebase:   func(p string) string { return "../b/" + strings.TrimPrefix(p, "./") },
		ReadFile: func(p string) ([]byte, error) { return []byte("hello\n"), nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.CUE)
	for _, want := range []string{
		`name:       "b"`,
		`charm: "wordpress"`, `// charm: "cs:~me/focal/wordpress-12"`,
		`yaml11: true`, `quoted: "yes"`, `whole: 16`, `ratio: 2.0`, `text: "line one\nline two"`,
		`motd: "hello\n"`, `key: "aGVsbG8K"`,
		`theme: "../b/files/theme.tgz"`,
		`data: count: 2`, `logs: count: 3`, `// storage: data: "ebs,10G,2"`, `// storage: cache: "5G"`,
		`charm: "../b/../charms/postgresql"`,
		`"web-db": ["web", "db"]`, `"web-cache-db-cache": ["web:cache", "db:cache"]`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "nothing") || strings.Contains(out, "cache: count") {
		t.Errorf("a null option or a count-less store was written:\n%s", out)
	}
	load(t, res.CUE)
}

// refusal is a bundle Juju's parser refuses, and where and what fixpoint
// import says about it.
type refusal struct {
	name, src string
	want      []string // "line:col: text"
}

func TestRefusals(t *testing.T) {
	overlay, err := os.ReadFile(filepath.Join(bundlesDir, "charmed-kubernetes/aws-overlay.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []refusal{
		{"unknown key", "applications:\n  a:\n    charm: x\n    num_unit: 1\n", []string{`4:5: application "a": unknown field "num_unit"; did you mean "num_units"?`}},
		{"unknown top key", "applications:\n  a: {charm: x}\nrelation: []\n", []string{`3:1: the bundle: unknown field "relation"; did you mean "relations"?`}},
		{"overlay-only in the base", "applications:\n  a: {charm: x, exposed-endpoints: {\"\": {expose-to-cidrs: [0.0.0.0/0]}}}\n", []string{`2:36: application "a": exposed-endpoints may only be given in an overlay`}},
		{"unknown application", "applications:\n  wordpress: {charm: x}\n  mysql: {charm: y}\nrelations:\n- [wordpress, mysq]\n", []string{`5:15: relation endpoint "mysq" names application "mysq", which the bundle does not define; did you mean "mysql"?`}},
		{"arity", "applications:\n  a: {charm: x}\n  b: {charm: y}\nrelations:\n- [a, b, a]\n- [a]\n", []string{`5:3: relation ["a","b","a"] has 3 endpoint(s), not 2`, `6:3: relation ["a"] has 1 endpoint(s), not 2`}},
		{"duplicate", "applications:\n  a: {charm: x}\n  b: {charm: y}\nrelations:\n- [\"a:db\", b]\n- [b, \"a:db\"]\n", []string{`6:3: relation ["b","a:db"] is defined more than once (first at line 5)`}},
		{"itself", "applications:\n  a: {charm: x}\nrelations:\n- [\"a:x\", \"a:y\"]\n", []string{`4:3: relation ["a:x","a:y"] relates application "a" to itself`}},
		{"subordinate units", "applications:\n  tel: {charm: telegraf, num_units: 2}\n", []string{`2:37: application "tel": num_units is 2 but charm telegraf is subordinate`}},
		{"subordinate placed", "applications:\n  tel: {charm: telegraf, to: [new]}\n", []string{`2:30: application "tel": charm telegraf is subordinate`}},
		{"unused machine", "machines:\n  \"0\": {}\n  \"1\": {}\napplications:\n  a: {charm: x, num_units: 1, to: [\"0\"]}\n", []string{`3:3: machine "1" is not referred to by a placement directive`}},
		{"unknown machine", "applications:\n  a: {charm: x, num_units: 1, to: [\"lxd:7\"]}\n", []string{`2:36: application "a": placement "lxd:7" names machine "7", which the machines section does not define`}},
		{"too many placements", "machines:\n  \"0\": {}\napplications:\n  a: {charm: x, num_units: 1, to: [\"0\", new]}\n", []string{`4:35: application "a": 2 placements in to: for 1 units`}},
		{"placed on unknown app", "applications:\n  a: {charm: x, num_units: 1, to: [\"lxd:b/0\"]}\n", []string{`2:36: application "a": placement "lxd:b/0" names application "b"`}},
		{"revision without channel", "applications:\n  a: {charm: x, revision: 3}\n", []string{`2:27: application "a": a revision needs a channel`}},
		{"revision in URL", "applications:\n  a: {charm: \"ch:x-3\"}\n", []string{`2:14: application "a": charm "ch:x-3" has a revision in its URL`}},
		{"series and base", "applications:\n  a: {charm: x, series: focal, base: ubuntu@20.04}\n", []string{`2:38: application "a": series and base cannot both be given`}},
		{"scale and num_units", "applications:\n  a: {charm: x, scale: 1, num_units: 1}\n", []string{`2:24: application "a": scale and num_units cannot both be given`}},
		{"overlay-only", "applications:\n  a: {charm: x, offers: {o: {endpoints: [db]}}}\n", []string{`2:25: application "a": offers may only be given in an overlay`}},
		{"saas", "saas:\n  db: {url: other:admin/db.pg}\napplications:\n  a: {charm: x}\n", []string{`2:3: saas "db": cross-model relations are not supported by fixpoint`}},
		{"option map", "applications:\n  a:\n    charm: x\n    options:\n      o: {k: v}\n", []string{`5:10: application "a": option o: a config value is a string, number or boolean`}},
		{"no charm", "applications:\n  a: {num_units: 1}\n", []string{`2:3: application "a" has no charm`}},
		{"service name", "applications:\n  Web_1: {charm: x}\n", []string{`2:3: application "Web_1": service name`}},
		{"no applications", "relations: []\n", []string{`1:1: the bundle has no applications`}},
		{"real overlay alone", string(overlay), []string{
			`14:24: relation endpoint "kubernetes-control-plane" names application "kubernetes-control-plane", which the bundle does not define`,
			`16:52: relation endpoint "easyrsa" names application "easyrsa"`,
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Convert([]byte(c.src), Options{File: "b.yaml", Subordinate: func(ref string) (bool, bool) {
				return ref == "telegraf", true
			}})
			var be *Error
			if !errors.As(err, &be) {
				t.Fatalf("err %v, want problems", err)
			}
			for _, w := range c.want {
				if !strings.Contains(be.Error(), "b.yaml:"+w) {
					t.Errorf("problems:\n%v\nwant b.yaml:%s", be, w)
				}
			}
		})
	}
}

func TestOverlaysMerge(t *testing.T) {
	src := `applications:
  a:
    charm: x
    num_units: 1
    options: {keep: 1, drop: 2}
    constraints: mem=4G
  c:
    charm: z
relations:
- [a, c]
---
applications:
  a:
    num_units: 3
    options: {drop: null, add: 3}
    constraints:
  b:
    charm: y
  c:
relations:
- ["a:db", b]
`
	overlay := "applications:\n  b:\n    exposed-endpoints: {\"\": {expose-to-cidrs: [10.0.0.0/8]}}\n    num_unit: 2\n"
	_, err := Convert([]byte(src), Options{File: "b.yaml", Overlays: []Overlay{{File: "o.yaml", Src: []byte(overlay)}}})
	var be *Error
	if !errors.As(err, &be) || len(be.Problems) != 1 || !strings.HasPrefix(be.Problems[0].String(), `o.yaml:4:5: application "b": unknown field "num_unit"`) {
		t.Fatalf("a problem in an overlay is not reported in it: %v", err)
	}
	overlay = strings.Replace(overlay, "num_unit:", "num_units:", 1)
	res, err := Convert([]byte(src), Options{File: "b.yaml", Overlays: []Overlay{{File: "o.yaml", Src: []byte(overlay)}}})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.CUE)
	for _, want := range []string{"units: 3", "keep: 1", "add: 3", `"a-b": ["a:db", "b"]`, "units: 2", `// exposed-endpoints: {"":{"expose-to-cidrs":["10.0.0.0/8"]}}`} {
		if !strings.Contains(out, want) {
			t.Errorf("merged output lacks %s:\n%s", want, out)
		}
	}
	for _, gone := range []string{"drop", "constraints", `charm: "z"`, `"a-c"`} {
		if strings.Contains(out, gone) {
			t.Errorf("merged output keeps %s:\n%s", gone, out)
		}
	}
	var exposed bool
	for _, w := range res.Warnings {
		exposed = exposed || strings.HasPrefix(w.String(), "o.yaml:3:5: warning: application \"b\": exposed-endpoints kept")
	}
	if !exposed {
		t.Errorf("warnings %v", res.Warnings)
	}
}

func TestRealOverlay(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(bundlesDir, "charmed-kubernetes/bundle.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	overlay, err := os.ReadFile(filepath.Join(bundlesDir, "charmed-kubernetes/aws-overlay.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Convert(src, Options{File: "testdata/bundles/charmed-kubernetes/bundle.yaml", Overlays: []Overlay{{File: "testdata/bundles/charmed-kubernetes/aws-overlay.yaml", Src: overlay}}})
	if err != nil {
		t.Fatal(err)
	}
	var warnings strings.Builder
	for _, w := range res.Warnings {
		warnings.WriteString(w.String() + "\n")
	}
	compareGolden(t, "testdata/charmed-kubernetes_bundle+aws-overlay.cue", string(res.CUE))
	compareGolden(t, "testdata/charmed-kubernetes_bundle+aws-overlay.warnings", warnings.String())
	env := load(t, res.CUE)
	if len(env.Env.Services) != 9 || len(env.Env.Relations) != 19 {
		t.Errorf("%d services, %d relations", len(env.Env.Services), len(env.Env.Relations))
	}
	if got := env.Env.Relations["aws-integrator-kubernetes-control-plane"]; len(got) != 2 || got[0] != "aws-integrator" {
		t.Errorf("a relation the overlay gives by application alone is %v", got)
	}
}

func TestNameFrom(t *testing.T) {
	for file, want := range map[string]string{
		"bundle.yaml":                     "bundle",
		"releases/1.35/bundle.yaml":       "env-1-35",
		"my_Bundle.v2.yaml":               "my-bundle-v2",
		"/abs/openstack/bundle.yml":       "openstack",
		strings.Repeat("x", 80) + ".yaml": strings.Repeat("x", 63),
	} {
		if got := nameFrom(fileBase(file)); got != want {
			t.Errorf("%s: %q, want %q", file, got, want)
		}
	}
}

// TestMergeKeys: anchors, aliases and merge keys read as Juju reads them.
func TestMergeKeys(t *testing.T) {
	src := `x-common: &common
  charm: base
  num_units: 2
  options: &opts {origin: distro}
applications:
  a:
    <<: *common
    num_units: 3
  b:
    charm: other
    options: *opts
`
	// An anchor's home is checked like any key: Juju has no x- keys.
	_, err := Convert([]byte(src), Options{File: "b.yaml"})
	if err == nil || !strings.Contains(err.Error(), `b.yaml:1:1: the bundle: unknown field "x-common"`) {
		t.Fatalf("err %v", err)
	}
	// Anchored under applications, as bundles do.
	src = `applications:
  a: &a
    charm: base
    num_units: 2
    options: &opts {origin: distro}
  b:
    <<: *a
    num_units: 3
  c:
    charm: other
    options: *opts
`
	res, err := Convert([]byte(src), Options{File: "b.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	e := load(t, res.CUE).Env
	if s := e.Services["b"]; s.Charm != "base" || *s.Units != 3 || s.Config["origin"] != "distro" {
		t.Errorf("b %+v", s)
	}
	if s := e.Services["c"]; s.Config["origin"] != "distro" {
		t.Errorf("c %+v", s)
	}
}

func TestCharmName(t *testing.T) {
	for ref, want := range map[string][2]string{
		"postgresql":                {"postgresql", ""},
		"ch:postgresql":             {"postgresql", ""},
		"ch:amd64/jammy/postgresql": {"postgresql", ""},
		"ch:postgresql-12":          {"postgresql", "12"},
		"cs:~me/focal/wordpress-12": {"wordpress", ""},
		"local:trusty/mysql-3":      {"mysql", ""},
		"mysql-8":                   {"mysql-8", ""},
		"ceph-osd":                  {"ceph-osd", ""},
	} {
		if name, rev := charmName(ref); name != want[0] || rev != want[1] {
			t.Errorf("%s: %q %q, want %q %q", ref, name, rev, want[0], want[1])
		}
	}
}

// FuzzConvert feeds Convert arbitrary bundles: it returns a result or an
// error, never panics or runs away, and what it writes parses as CUE (no
// value or comment of the bundle's breaks out of its place).
func FuzzConvert(f *testing.F) {
	for _, b := range realBundles {
		if src, err := os.ReadFile(filepath.Join(bundlesDir, b)); err == nil {
			f.Add(src)
		}
	}
	f.Add([]byte("a: &a {c: &b {<<: *a}, <<: *b}\napplications: {x: {<<: *a, charm: y}}\n"))
	f.Add([]byte("applications:\n  a: {charm: x}\n---\napplications:\n  a:\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		res, err := Convert(src, Options{File: "b.yaml"})
		if err != nil {
			return
		}
		if _, err := parser.ParseFile("env.cue", res.CUE); err != nil {
			t.Fatalf("the output does not parse: %v\n%s", err, res.CUE)
		}
	})
}
