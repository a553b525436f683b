package schemas

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/encoding/yaml"
)

// jujuOnly are metadata.yaml fields of Juju charms that mean nothing to
// fixpoint. They are dropped so that old charms load unchanged; any other
// unknown field is still an error, which catches typos such as "provide:".
var jujuOnly = map[string]bool{
	"maintainer": true, "maintainers": true, "tags": true, "categories": true,
	"series": true, "min-juju-version": true, "terms": true, "extra-bindings": true,
	"devices": true, "payloads": true,
	"deployment": true, "assumes": true, "containers": true, "display-name": true,
	"docs": true, "issues": true, "source": true, "website": true, "bases": true,
	"charm-user": true, "links": true, "format": true,
}

// charmcraftOnly are charmcraft.yaml fields about building and
// publishing the charm, or about features fixpoint has no counterpart for
// (actions; `fixpoint vet` warns about those, see JujuFeatures).
var charmcraftOnly = map[string]bool{
	"type": true, "base": true, "bases": true, "build-base": true, "platforms": true,
	"parts": true, "charmhub": true, "charm-libs": true, "actions": true, "title": true,
	"analysis": true, "config-file": true, "requires-juju": true,
}

// loadLegacy reads an old charm's metadata.yaml and config.yaml (which is
// optional) into one value of #Charm's shape: config.yaml's options go
// under config, Juju's "endpoint: interface" shorthand becomes
// {interface: ...}, and Juju-only fields are dropped. A charm written for
// charmcraft 3 may have neither, only charmcraft.yaml, which holds the
// same fields (config with its options inline) among build settings;
// then that is read. The YAML is read by CUE's own decoder so that every
// value keeps its file:line:col.
func loadLegacy(ctx *cue.Context, dir string) (cue.Value, []*ast.File, error) {
	metaName := filepath.Join(dir, MetadataFile)
	craft := !exists(metaName)
	if craft {
		metaName = filepath.Join(dir, CharmcraftFile)
	}
	meta, err := extractYAML(metaName)
	if err != nil {
		return cue.Value{}, nil, err
	}
	var decls []ast.Decl
	for _, d := range meta.Decls {
		f, ok := d.(*ast.Field)
		if !ok {
			decls = append(decls, d)
			continue
		}
		name := labelName(f)
		if jujuOnly[name] || craft && charmcraftOnly[name] {
			continue
		}
		switch name {
		case "provides", "requires", "peers":
			if s, ok := f.Value.(*ast.StructLit); ok {
				convertEndpoints(s)
			}
		}
		decls = append(decls, f)
	}
	cfgName := filepath.Join(dir, ConfigFile)
	if !craft && exists(cfgName) {
		cfg, err := extractYAML(cfgName)
		if err != nil {
			return cue.Value{}, nil, err
		}
		if len(cfg.Decls) > 0 {
			// Keep the config file's own nodes, and so its positions:
			// config: { <config.yaml> }.
			decls = append(decls, &ast.Field{
				Label: ast.NewIdent("config"),
				Value: &ast.StructLit{Elts: cfg.Decls},
			})
		}
	}
	meta.Decls = decls
	// As for charm.cue, errors inside the value are left to validation.
	return ctx.BuildFile(meta), []*ast.File{meta}, nil
}

func extractYAML(name string) (*ast.File, error) {
	src, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	f, err := yaml.Extract(name, src)
	if err != nil {
		return nil, yamlError(name, err)
	}
	return f, nil
}

// yamlSyntax matches CUE's wording of a YAML syntax error, "file:3: msg":
// the YAML parser knows the line but not the column.
var yamlSyntax = regexp.MustCompile(`^(.*):(\d+): (.*)$`)

func yamlError(name string, err error) error {
	p := Problem{File: rel(name), Msg: "YAML syntax error: " + err.Error()}
	if m := yamlSyntax.FindStringSubmatch(err.Error()); m != nil && m[1] == name {
		p.Line, _ = strconv.Atoi(m[2])
		p.Msg = "YAML syntax error: " + m[3]
	}
	return &Error{Problems: []Problem{p}}
}

// convertEndpoints rewrites Juju's shorthand "db: mysql" to
// "db: {interface: mysql}" and drops "optional", which fixpoint ignores.
func convertEndpoints(s *ast.StructLit) {
	for _, d := range s.Elts {
		f, ok := d.(*ast.Field)
		if !ok {
			continue
		}
		switch v := f.Value.(type) {
		case *ast.BasicLit:
			f.Value = &ast.StructLit{Elts: []ast.Decl{&ast.Field{Label: ast.NewIdent("interface"), Value: v}}}
		case *ast.StructLit:
			var keep []ast.Decl
			for _, e := range v.Elts {
				if ef, ok := e.(*ast.Field); ok && labelName(ef) == "optional" {
					continue
				}
				keep = append(keep, e)
			}
			v.Elts = keep
		}
	}
}

func labelName(f *ast.Field) string {
	name, _, err := ast.LabelName(f.Label)
	if err != nil {
		return ""
	}
	return name
}
