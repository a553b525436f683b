package engine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// Bounds engine/DESIGN.md sets on the engine's types: a type with
// manyMethods methods or more is one concern a newcomer can state in a
// line, so it holds at most maxFields fields and its methods live in at
// most maxFiles files.
const (
	manyMethods = 10
	maxFields   = 12
	maxFiles    = 6
)

// TestEngineTypesStayOneConcern holds every struct type of engine/ and
// its packages (tests left out) to the bounds above. It reads the code's
// syntax only: methods are counted by receiver type name per package.
func TestEngineTypesStayOneConcern(t *testing.T) {
	type typeInfo struct {
		fields  int
		methods int
		files   map[string]bool
	}
	// by package directory, then type name
	pkgs := map[string]map[string]*typeInfo{}
	get := func(dir, name string) *typeInfo {
		if pkgs[dir] == nil {
			pkgs[dir] = map[string]*typeInfo{}
		}
		ti := pkgs[dir][name]
		if ti == nil {
			ti = &typeInfo{files: map[string]bool{}}
			pkgs[dir][name] = ti
		}
		return ti
	}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					ts, ok := spec.(*ast.TypeSpec)
					if !ok {
						continue
					}
					st, ok := ts.Type.(*ast.StructType)
					if !ok {
						continue
					}
					ti := get(dir, ts.Name.Name)
					for _, fl := range st.Fields.List {
						ti.fields += max(len(fl.Names), 1)
					}
					ti.files[path] = true
				}
			case *ast.FuncDecl:
				if d.Recv == nil || len(d.Recv.List) == 0 {
					continue
				}
				if name := receiverName(d.Recv.List[0].Type); name != "" {
					ti := get(dir, name)
					ti.methods++
					ti.files[path] = true
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for dir, types := range pkgs {
		for name, ti := range types {
			if ti.methods < manyMethods {
				continue
			}
			checked++
			if ti.fields > maxFields {
				t.Errorf("engine/%s: %s has %d methods and %d fields; a type of %d methods or more holds at most %d: split it by concern", dir, name, ti.methods, ti.fields, manyMethods, maxFields)
			}
			if len(ti.files) > maxFiles {
				t.Errorf("engine/%s: %s's declaration and methods spread over %d files; at most %d", dir, name, len(ti.files), maxFiles)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no type of the engine has ten methods or more: the walk found no code")
	}
}

// receiverName is the type name of a method's receiver, "" if none.
func receiverName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
