package schemas

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/model"
)

func TestLoadCharmMetaFromCharmCUE(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"charm.cue": `name:    "db"
summary: "replicated database"
provides: db: interface: "sql"
peers: cluster: interface: "db-cluster"
requires: logs: {interface: "syslog", scope: "container", limit: 1}
config: options: {
	max_connections: {type: "int", default: 100, description: "connection cap"}
	ratio: {type: "float", default: 1}
	name: {type: "string"}
	debug: {type: "boolean", default: false}
}
`})
	meta, err := LoadCharmMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := &model.CharmMeta{
		Name:     "db",
		Summary:  "replicated database",
		Provides: map[string]model.Endpoint{"db": {Interface: "sql"}},
		Requires: map[string]model.Endpoint{"logs": {Interface: "syslog", Scope: model.Container, Limit: 1}},
		Peers:    map[string]model.Endpoint{"cluster": {Interface: "db-cluster"}},
		Options: map[string]model.Option{
			"max_connections": {Type: "int", Default: int64(100), Description: "connection cap"},
			"ratio":           {Type: "float", Default: int64(1)},
			"name":            {Type: "string"},
			"debug":           {Type: "boolean", Default: false},
		},
	}
	if !reflect.DeepEqual(meta, want) {
		t.Errorf("got  %+v\nwant %+v", meta, want)
	}
}

func TestLoadCharmMetaFromJujuYAML(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"metadata.yaml": `name: logship
summary: ships logs
maintainer: someone <a@b.c>
series: [focal]
subordinate: true
requires:
  host:
    interface: juju-info
    scope: container
    optional: true
provides:
  metrics: prometheus
`,
		"config.yaml": `options:
  level:
    type: string
    default: info
    description: log level
`,
	})
	meta, err := LoadCharmMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := &model.CharmMeta{
		Name:        "logship",
		Summary:     "ships logs",
		Subordinate: true,
		Requires:    map[string]model.Endpoint{"host": {Interface: "juju-info", Scope: model.Container}},
		Provides:    map[string]model.Endpoint{"metrics": {Interface: "prometheus"}},
		Options:     map[string]model.Option{"level": {Type: "string", Default: "info", Description: "log level"}},
	}
	if !reflect.DeepEqual(meta, want) {
		t.Errorf("got  %+v\nwant %+v", meta, want)
	}
}

func TestLoadCharmMetaErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string
		want  []string // substrings, in order, one per problem
	}{
		{"no name", map[string]string{"charm.cue": "summary: \"x\"\n"},
			[]string{"charm.cue:1:1: name: is missing: name is the charm's name"}},
		{"empty file", map[string]string{"charm.cue": ""},
			[]string{"charm.cue:1:1: name: is missing"}},
		{"bad option type and default", map[string]string{"charm.cue": `name: "db"
config: options: {
	port: {type: "integer", default: 80}
	ratio: {type: "float", default: "high"}
}
`}, []string{
			`charm.cue:3:15: config.options.port.type: option type must be "string", "int", "float", "boolean" or "secret"`,
			`charm.cue:4:34: config.options.ratio.default: default must be a number, as the option's type is "float"`,
		}},
		{"bad endpoint", map[string]string{"charm.cue": `name: "db"
provides: db: {interface: "sql", scope: "machine", limt: 2}
requires: db: interface: "sql"
peers: p: {}
`}, []string{
			`charm.cue:2:41: provides.db.scope: scope must be "global" or "container"`,
			`charm.cue:2:52: provides.db.limt: unknown field "limt" (did you mean "limit"?)`,
			`charm.cue:4:8: peers.p.interface: is missing: interface names the protocol`,
		}},
		{"duplicate endpoint", map[string]string{"charm.cue": "name: \"db\"\nprovides: db: interface: \"sql\"\nrequires: db: interface: \"sql\"\n"},
			[]string{`charm.cue:3:11: requires.db: endpoint "db" is also declared under provides`}},
		{"broken yaml", map[string]string{"metadata.yaml": "name: x\nprovides:\n  db: [interface\n"},
			[]string{"metadata.yaml:2: YAML syntax error: did not find expected"}},
		{"yaml typo", map[string]string{"metadata.yaml": "name: x\nprovide:\n  db: sql\n"},
			[]string{`metadata.yaml:2:1: provide: unknown field "provide" (did you mean "provides"?)`}},
		{"yaml bad option", map[string]string{"metadata.yaml": "name: x\n", "config.yaml": "options:\n  port:\n    type: int\n    default: eighty\n"},
			[]string{`config.yaml:4:14: config.options.port.default: default must be a whole number`}},
		{"not a charm", map[string]string{"README": "hi"}, []string{"is not a charm: it has no charm.cue, metadata.yaml or charmcraft.yaml"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, c.files)
			_, err := LoadCharmMeta(dir)
			if err == nil {
				t.Fatal("no error")
			}
			var e *Error
			if errors.As(err, &e) && len(e.Problems) != len(c.want) {
				t.Errorf("got %d problems, want %d:\n%v", len(e.Problems), len(c.want), err)
			}
			lines := strings.Split(err.Error(), "\n")
			for i, w := range c.want {
				if i >= len(lines) || !strings.Contains(lines[i], w) {
					t.Errorf("line %d: want %q in\n%v", i, w, err)
				}
			}
		})
	}
	if _, err := LoadCharmMeta(filepath.Join(t.TempDir(), "nope")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing dir: %v", err)
	}
}
