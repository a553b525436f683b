package schemas

import (
	"strconv"
	"strings"

	"cuelang.org/go/cue"
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

// posIndex maps every field and list element of the user's own value (not
// unified with the schema, whose positions would point into the schema
// files) to where it is written.
type posIndex struct {
	at map[string]position
	// fallback is where to report a problem nothing else locates, such
	// as a required field missing from an empty file.
	fallback position
}

func pathKey(path []string) string { return strings.Join(path, "\x00") }

// buildIndex walks v and records the position of every field and list
// element, keyed by raw path.
func buildIndex(v cue.Value) *posIndex {
	ix := &posIndex{at: map[string]position{}}
	ix.walk(v, nil)
	return ix
}

func (ix *posIndex) walk(v cue.Value, path []string) {
	if p := positionOf(v.Pos()); p.file != "" {
		ix.at[pathKey(path)] = p
	}
	switch v.IncompleteKind() {
	case cue.StructKind:
		it, err := v.Fields()
		if err != nil {
			return
		}
		for it.Next() {
			ix.walk(it.Value(), append(path[:len(path):len(path)], it.Selector().Unquoted()))
		}
	case cue.ListKind:
		it, err := v.List()
		if err != nil {
			return
		}
		for i := 0; it.Next(); i++ {
			ix.walk(it.Value(), append(path[:len(path):len(path)], strconv.Itoa(i)))
		}
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
