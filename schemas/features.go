package schemas

import (
	"fmt"
	"path/filepath"

	"cuelang.org/go/cue/ast"
)

// ActionsFile declares a Juju charm's actions, beside metadata.yaml.
const ActionsFile = "actions.yaml"

// jujuFeatures maps the metadata fields of Juju features fixpoint has no
// counterpart for to how the feature is named in warnings. Actions run
// (actions.yaml, charmcraft.yaml's actions: `fixpoint run`).
var jujuFeatures = []struct{ field, feature string }{
	{"containers", "workload containers"},
	{"devices", "devices"},
	{"payloads", "payloads"},
}

// JujuFeatures lists, as warnings at their file:line, the Juju features
// an old charm in dir declares that fixpoint has no counterpart for:
// block storage, workload containers, devices and payloads (config options
// of type secret work as Juju 3.1's). Such a charm loads and runs, but the
// hook tools of those features fail, naming the feature; `fixpoint vet`
// prints these so that nobody learns it from a failed hook. A charm.cue
// charm has none.
func JujuFeatures(dir string) ([]Problem, error) {
	dir = absPath(dir)
	name := filepath.Join(dir, MetadataFile)
	if !exists(name) {
		name = filepath.Join(dir, CharmcraftFile)
	}
	if exists(filepath.Join(dir, CharmFile)) || !exists(name) {
		return nil, nil
	}
	var out []Problem
	warn := func(file string, line int, path, msg string) {
		out = append(out, Problem{File: rel(file), Line: line, Path: path, Msg: msg})
	}
	files := []string{name}
	if cfg := filepath.Join(dir, ConfigFile); name != filepath.Join(dir, CharmcraftFile) && exists(cfg) {
		files = append(files, cfg)
	}
	for _, file := range files {
		f, err := extractYAML(file)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			field, ok := d.(*ast.Field)
			if !ok {
				continue
			}
			label := labelName(field)
			for _, jf := range jujuFeatures {
				if label == jf.field {
					warn(file, field.Pos().Line(), label, fmt.Sprintf("the charm declares %s, which fixpoint has no counterpart for: it runs, but the hook tools of %s fail, naming the feature", jf.feature, jf.feature))
				}
			}
			if label == "storage" {
				blockStores(field, func(store string, line int) {
					warn(file, line, "storage."+store, "storage of type block: fixpoint has no block devices, so units get no instance of it (filesystem stores get a directory each)")
				})
			}
		}
	}
	return out, nil
}
