package schemas

import (
	"strconv"
	"strings"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/token"
)

// position is a place in a file. It is kept as plain data rather than a
// token.Pos so that an Env does not pin the CUE context it came from.
type position struct {
	file      string
	line, col int
}

func positionOf(p token.Pos) position {
	if !p.IsValid() {
		return position{}
	}
	return position{p.Filename(), p.Line(), p.Column()}
}

// posIndex maps the fields and list elements the user wrote to where they
// are written. It is built from the syntax of the user's files, not from
// the evaluated value: that costs next to nothing, and only the user's own
// text can say where a mistake is (the unified value's positions point
// into the schemas). Fields that are computed rather than written
// (comprehensions, references) are found at their nearest written parent.
type posIndex struct {
	at map[string]position
	// fallback is where to report a problem nothing else locates, such
	// as a required field missing from an empty file.
	fallback position
}

func pathKey(path []string) string { return strings.Join(path, "\x00") }

// indexFiles indexes the positions in the user's files. The first file
// stands for the top level, so a missing top-level field is reported at
// its start.
func indexFiles(files []*ast.File, first string) *posIndex {
	ix := &posIndex{at: map[string]position{}, fallback: position{file: first}}
	if first != "" {
		ix.at[""] = position{first, 1, 1}
	}
	for _, f := range files {
		ix.decls(f.Decls, nil)
	}
	return ix
}

// indexExpr indexes a single expression, such as decoded JSON.
func indexExpr(x ast.Expr) *posIndex {
	ix := &posIndex{at: map[string]position{}}
	ix.expr(x, nil)
	return ix
}

func (ix *posIndex) decls(decls []ast.Decl, path []string) {
	for _, d := range decls {
		switch d := d.(type) {
		case *ast.Field:
			name, _, err := ast.LabelName(d.Label)
			if err != nil || strings.HasPrefix(name, "#") || strings.HasPrefix(name, "_") {
				continue // a pattern, dynamic, definition or hidden label
			}
			sub := append(path[:len(path):len(path)], name)
			ix.set(sub, d.Label.Pos())
			ix.expr(d.Value, sub)
		case *ast.EmbedDecl:
			ix.expr(d.Expr, path)
		}
	}
}

func (ix *posIndex) expr(x ast.Expr, path []string) {
	switch x := x.(type) {
	case *ast.StructLit:
		ix.decls(x.Elts, path)
	case *ast.ListLit:
		for i, e := range x.Elts {
			if _, ok := e.(*ast.Ellipsis); ok {
				break
			}
			sub := append(path[:len(path):len(path)], strconv.Itoa(i))
			ix.set(sub, e.Pos())
			ix.expr(e, sub)
		}
	case *ast.BinaryExpr:
		// a & b: both sides may hold fields the user wrote.
		if x.Op == token.AND {
			ix.expr(x.X, path)
			ix.expr(x.Y, path)
		}
	case *ast.ParenExpr:
		ix.expr(x.X, path)
	}
}

// set keeps the first position written for a path: where several files
// declare the same field, the first is as good as any.
func (ix *posIndex) set(path []string, p token.Pos) {
	k := pathKey(path)
	if _, ok := ix.at[k]; !ok && p.IsValid() {
		ix.at[k] = positionOf(p)
	}
}

// lookup returns the position of path, or of its nearest ancestor that has
// one: a field the user left out is reported where its parent is written.
func (ix *posIndex) lookup(path []string) position {
	for n := len(path); n >= 0; n-- {
		if p, ok := ix.at[pathKey(path[:n])]; ok {
			return p
		}
	}
	return ix.fallback
}
