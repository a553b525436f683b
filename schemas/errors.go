package schemas

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	cueerrors "cuelang.org/go/cue/errors"
)

// Problem is one mistake in a user's file: where it is, which field, and
// what is wrong with it, including how to put it right.
type Problem struct {
	// File, Line and Col locate the mistake; File is relative to the
	// working directory when that is short. Line is 0 when unknown.
	File      string
	Line, Col int
	// Path is the field in CUE syntax, e.g. services.web.config.port or
	// relations."web-db".
	Path string
	// Msg says what is wrong and how to fix it.
	Msg string
}

// Pos returns "file:line:col", "file:line", "file" or "" as far as the
// position is known (YAML syntax errors come with a line only).
func (p Problem) Pos() string {
	switch {
	case p.File == "":
		return ""
	case p.Line == 0:
		return p.File
	case p.Col == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// String formats the problem as "file:line:col: path: message".
func (p Problem) String() string {
	var b strings.Builder
	if pos := p.Pos(); pos != "" {
		b.WriteString(pos)
		b.WriteString(": ")
	}
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Error is every problem one check found, sorted by position. CUE itself
// folds a list of errors into one line with "(and N more errors)"; this
// lists each on its own line so that none is hidden.
type Error struct {
	Problems []Problem
	// Partial is, for an environment that fails its schema, the rest of
	// it: without the fields the problems name (partial), for the
	// checks that can still run on it. Nil otherwise.
	Partial *Env
}

// Error lists every problem, one per line.
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Sort orders problems by file, line, column and path, and drops exact
// duplicates (the same mistake reached through two schema rules).
func (e *Error) Sort() {
	ps := e.Problems
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Col != b.Col {
			return a.Col < b.Col
		}
		return a.Path < b.Path
	})
	out := ps[:0]
	for i, p := range ps {
		if i > 0 && p == ps[i-1] {
			continue
		}
		out = append(out, p)
	}
	e.Problems = out
}

// errOrNil returns e as an error, or nil when it holds no problem, so that
// callers never return a typed nil.
func (e *Error) errOrNil() error {
	if len(e.Problems) == 0 {
		return nil
	}
	e.Sort()
	return e
}

// problemAt builds a Problem at a position.
func problemAt(pos position, path []string, msg string) Problem {
	return Problem{File: rel(pos.file), Line: pos.line, Col: pos.col, Path: FormatPath(path), Msg: msg}
}

var (
	disjunctionHeader = regexp.MustCompile(`^\d+ errors in empty disjunction:?$`)
	// Messages CUE words in its own terms; the schema's comment for the
	// field is added to them so that they say how to fix the mistake.
	needsHint = regexp.MustCompile(`^(conflicting values|invalid value|incompatible list lengths|incomplete value|field not allowed|field is required)`)
)

// fromCUE converts a CUE error into problems. Positions in the user's
// files win over positions in the schemas; when CUE only knows the
// schema's position (a missing field, a wrong list length), the user's
// value is located through idx instead.
func fromCUE(err error, idx *posIndex, def cue.Value) []Problem {
	var out []Problem
	for _, e := range cueerrors.Errors(err) {
		msg := strings.TrimSuffix(cueerrors.StringWithConfig(e, &cueerrors.Config{OmitPath: true}), ":")
		if disjunctionHeader.MatchString(msg) {
			// The disjuncts' own errors follow; the header says nothing.
			continue
		}
		path := unquotePath(e.Path())
		if msg == "field not allowed" && len(path) > 0 && def.Exists() {
			if parent, _, ok := schemaAt(def, path[:len(path)-1]); ok {
				if names := fieldNames(parent); len(names) > 0 {
					msg = unknownField(path[len(path)-1], names)
				}
			}
		}
		hinted := needsHint.MatchString(msg)
		if m := mismatch.FindStringSubmatch(msg); m != nil {
			msg = rewordMismatch(m[1], m[2], m[3], m[4])
		}
		if hinted && def.Exists() {
			if doc := schemaDoc(def, path); doc != "" {
				msg += ": " + doc
			}
		}
		var pos position
		for _, p := range cueerrors.Positions(e) {
			if p.IsValid() && !isSchemaFile(p.Filename()) {
				pos = positionOf(p)
				break
			}
		}
		if pos.file == "" && idx != nil {
			pos = idx.lookup(path)
		}
		out = append(out, problemAt(pos, path, msg))
	}
	return out
}

// unquotePath turns CUE's printed path elements ("web-db" in quotes) back
// into raw labels.
func unquotePath(elems []string) []string {
	out := make([]string, len(elems))
	for i, s := range elems {
		if u, err := strconv.Unquote(s); err == nil && strings.HasPrefix(s, `"`) {
			s = u
		}
		out[i] = s
	}
	return out
}

// mismatch is CUE's wording of a value of the wrong type.
var mismatch = regexp.MustCompile(`^conflicting values (.+) and (.+) \(mismatched types (\w+) and (\w+)\)$`)

// kindWords are how CUE prints a bare type in a conflict; the side that is
// one of these is the schema's, the other the user's value.
var kindWords = map[string]string{
	"string": "a string", "int": "a whole number", "float": "a number", "number": "a number",
	"bool": "true or false", "null": "null", "bytes": "bytes",
}

// rewordMismatch turns "conflicting values 42 and string (mismatched
// types int and string)" into "is 42 (int) but must be a string", which
// says which side is the user's. Conflicts it cannot attribute keep
// CUE's words.
func rewordMismatch(a, b, ka, kb string) string {
	wa, aIsKind := kindWords[a]
	wb, bIsKind := kindWords[b]
	switch {
	case bIsKind && !aIsKind:
		return fmt.Sprintf("is %s (%s) but must be %s", a, ka, wb)
	case aIsKind && !bIsKind:
		return fmt.Sprintf("is %s (%s) but must be %s", b, kb, wa)
	}
	return fmt.Sprintf("conflicting values %s and %s (mismatched types %s and %s)", a, b, ka, kb)
}

var identRE = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)
var indexRE = regexp.MustCompile(`^[0-9]+$`)

// FormatPath prints raw labels as a CUE path: services."web-db".config.port.
// All-digit elements are list indexes and printed bare.
func FormatPath(path []string) string {
	var b strings.Builder
	for i, s := range path {
		if i > 0 {
			b.WriteByte('.')
		}
		if identRE.MatchString(s) || indexRE.MatchString(s) {
			b.WriteString(s)
		} else {
			b.WriteString(strconv.Quote(s))
		}
	}
	return b.String()
}
