//go:build !race

package engine

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestRootFilesAreLayered holds the package's files to the layering
// engine/DESIGN.md states: a file uses only the files listed after it in
// its "Layering" section, and that list names every file of the package
// and no other. A name used across files is a use of the file that
// declares it: a type, function, constant, variable, method or field.
// Race builds leave it out: it reads code and runs none, and go/types
// under the race detector only costs time.
func TestRootFilesAreLayered(t *testing.T) {
	order := layeringOrder(t)
	at := map[string]int{}
	for i, name := range order {
		at[name] = i
	}
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		if _, ok := at[name]; !ok && name != "doc.go" {
			t.Errorf("engine/%s is not in engine/DESIGN.md's layering: list it under the files it uses and over those that use it", name)
		}
	}
	for _, name := range order {
		if !slices.Contains(names, name) {
			t.Errorf("engine/DESIGN.md's layering names %s, which engine/ does not hold: take it out or name the file that holds its part", name)
		}
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	pkg, err := conf.Check("github.com/fixpoint/fixpoint/engine", fset, files, info)
	if err != nil {
		t.Fatalf("type-check the engine's files: %v", err)
	}
	seen := map[[2]string]bool{}
	for id, obj := range info.Uses {
		if obj.Pkg() != pkg || !obj.Pos().IsValid() || !declaredAcrossFiles(pkg, obj) {
			continue
		}
		user, decl := fset.Position(id.Pos()).Filename, fset.Position(obj.Pos()).Filename
		ui, uok := at[user]
		di, dok := at[decl]
		if !uok || !dok || ui <= di || seen[[2]string{user, decl}] {
			continue
		}
		seen[[2]string{user, decl}] = true
		t.Errorf("%s uses %s, declared in %s, which engine/DESIGN.md's layering lists before it: move %s to a file under %s, or reorder the layering", user, obj.Name(), decl, obj.Name(), user)
	}
}

// declaredAcrossFiles says whether obj can be named from another file: a
// package-level name, or a method or field.
func declaredAcrossFiles(pkg *types.Package, obj types.Object) bool {
	switch o := obj.(type) {
	case *types.Var:
		return o.IsField() || o.Parent() == pkg.Scope()
	case *types.Func:
		return o.Signature().Recv() != nil || o.Parent() == pkg.Scope()
	}
	return obj.Parent() == pkg.Scope()
}

// layeringOrder is the files named in engine/DESIGN.md's "Layering"
// section, in the order it names them.
func layeringOrder(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile("DESIGN.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	start := strings.Index(s, "\n## Layering\n")
	if start < 0 {
		t.Fatal(`engine/DESIGN.md has no "## Layering" section`)
	}
	s = s[start+1:]
	if end := strings.Index(s, "\n## "); end >= 0 {
		s = s[:end]
	}
	var order []string
	for _, m := range regexp.MustCompile("`([a-z_]+\\.go)`").FindAllStringSubmatch(s, -1) {
		if !slices.Contains(order, m[1]) {
			order = append(order, m[1])
		}
	}
	return order
}
