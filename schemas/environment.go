package schemas

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	"github.com/fixpoint/fixpoint/model"
)

// Env is an environment loaded from the user's CUE files, with what is
// needed to report later problems at their place in those files.
type Env struct {
	// Env is the environment as plain data.
	Env *model.Environment
	// Dir is the directory of the files; charm paths are relative to it.
	Dir string
	// Files are the files the environment was loaded from, absolute.
	Files []string
	// Expect is what `fixpoint charm test` requires of each service's
	// units at the fixed point, by service (the file's expect:). It is
	// no part of the environment the control plane runs.
	Expect map[string]model.Expect

	idx *posIndex
}

// LoadEnvironment evaluates the CUE files named by paths (one file,
// several files of one directory, or a directory, whose .cue files unify),
// checks the result against #Environment and decodes it. The package
// clause is optional. Files may import "fixpoint.dev/schemas".
//
// Every problem found is returned in one *Error, each at file:line:col of
// the user's file.
func LoadEnvironment(paths ...string) (*Env, error) {
	dir, files, err := userFiles(paths)
	if err != nil {
		return nil, err
	}
	// One context per evaluation: a long-lived context only grows
	// (cue-lang/cue#2850), and nothing here is reused across calls.
	ctx := cuecontext.New()
	user, syntax, err := loadUser(ctx, dir, files)
	if err != nil {
		return nil, loadError(err)
	}
	def, err := definition(ctx, "#Environment")
	if err != nil {
		return nil, err
	}
	idx := indexFiles(syntax, files[0])
	v, err := validate(user, def, idx)
	if e, ok := err.(*Error); ok {
		if e.Partial = partial(user, e.Problems); e.Partial != nil {
			e.Partial.Dir, e.Partial.Files, e.Partial.idx = dir, files, idx
		}
		return nil, e
	}
	if err != nil {
		return nil, err
	}
	env, expect, err := decodeEnvironment(v)
	if err != nil {
		return nil, err
	}
	e := &Env{Env: env, Dir: dir, Files: files, Expect: expect, idx: idx}
	if err := e.checkExpect(); err != nil {
		return nil, err
	}
	return e, nil
}

// checkExpect refuses an expectation of a service the environment does
// not declare.
func (e *Env) checkExpect() error {
	errs := &Error{}
	for _, name := range slices.Sorted(maps.Keys(e.Expect)) {
		if _, ok := e.Env.Services[name]; !ok {
			errs.Problems = append(errs.Problems, e.Problem(model.Problem{Path: []string{"expect", name}, Msg: fmt.Sprintf("no service %s in services; expect names services of this environment", name)}))
		}
	}
	if err := errs.errOrNil(); err != nil {
		errs.Partial = &Env{Env: e.Env, Dir: e.Dir, Files: e.Files, idx: e.idx}
		return err
	}
	return nil
}

// validate unifies the user's value with a definition and returns the
// result, or every problem with it.
func validate(user, def cue.Value, idx *posIndex) (cue.Value, error) {
	// user.Unify(def), not the reverse: the order decides whether error
	// paths read "services.web" or "#Environment.services.web", and
	// unifying with the closed definition closes the user's top level, so
	// stray top-level fields are errors too (the lesson of Dagger #1711).
	v := user.Unify(def)
	err := v.Validate(cue.Concrete(true))
	if err == nil {
		// Whatever the shape check finds, CUE finds too; it only leaves
		// some of it out when there is more to report.
		return v, nil
	}
	cueProblems := fromCUE(err, idx, def)
	shape := checkShape(user, def, idx)
	e := &Error{Problems: shape}
	for _, p := range cueProblems {
		if !coveredBy(p, shape) {
			e.Problems = append(e.Problems, p)
		}
	}
	return cue.Value{}, e.errOrNil()
}

// coveredBy reports whether the shape check already reported a problem at
// p's path or above it, in which case CUE's own wording of the same
// mistake would only repeat it.
func coveredBy(p Problem, shape []Problem) bool {
	for _, s := range shape {
		if p.Path == s.Path || strings.HasPrefix(p.Path, s.Path+".") || s.Path == "" {
			return true
		}
	}
	return false
}

// loadError turns a load or build error (a syntax error, an unknown
// import) into an *Error with positions.
//
// Only the first problem of each file is kept: after a syntax error the
// parser's further complaints ("expected '}', found 'EOF'") are mostly
// echoes of the first, and point away from where the fix goes.
func loadError(err error) error {
	if e, ok := err.(*Error); ok {
		return e
	}
	ps := fromCUE(err, nil, cue.Value{})
	if len(ps) == 0 {
		return err
	}
	e := &Error{Problems: ps}
	e.Sort()
	seen := map[string]bool{}
	var first []Problem
	for _, p := range e.Problems {
		if !seen[p.File] {
			seen[p.File] = true
			first = append(first, p)
		}
	}
	e.Problems = first
	return e
}

// Pos returns "file:line:col" of the field at path (raw labels, e.g.
// ["services", "web", "config", "port"]) in the user's files, or of its
// nearest ancestor written there, or "" when nothing is known.
func (e *Env) Pos(path []string) string {
	if e == nil || e.idx == nil {
		return ""
	}
	return problemAt(e.idx.lookup(path), nil, "").Pos()
}

// Problem places a model problem (a path and a message) in the user's
// files.
func (e *Env) Problem(p model.Problem) Problem {
	var pos position
	if e != nil && e.idx != nil {
		pos = e.idx.lookup(p.Path)
	}
	return problemAt(pos, p.Path, p.Msg)
}

// decodeEnvironment turns the validated value into model.Environment. It
// goes through JSON rather than Value.Decode, which is about twice as slow
// on large environments; numbers keep CUE's distinction between int
// (int64) and float (float64), as Value.Decode would.
func decodeEnvironment(v cue.Value) (*model.Environment, map[string]model.Expect, error) {
	data, err := v.MarshalJSON()
	if err != nil {
		return nil, nil, fmt.Errorf("decoding environment: %w", err)
	}
	env, err := decodeJSON(data)
	if err != nil {
		return nil, nil, err
	}
	var extra struct {
		Expect map[string]model.Expect `json:"expect"`
	}
	if err := json.Unmarshal(data, &extra); err != nil {
		return nil, nil, fmt.Errorf("decoding environment: %w", err)
	}
	return env, extra.Expect, nil
}

// decodeJSON decodes an environment written as JSON.
func decodeJSON(data []byte) (*model.Environment, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var env model.Environment
	if err := dec.Decode(&env); err != nil {
		return nil, fmt.Errorf("decoding environment: %w", err)
	}
	for _, s := range env.Services {
		for k, x := range s.Config {
			s.Config[k] = plainNumber(x)
		}
	}
	return &env, nil
}

// plainNumber turns a json.Number into int64 when it is written as an
// integer (CUE writes floats with a decimal point or exponent) and into
// float64 otherwise.
func plainNumber(x any) any {
	n, ok := x.(json.Number)
	if !ok {
		return x
	}
	if i, err := n.Int64(); err == nil && !strings.ContainsAny(string(n), ".eE") {
		return i
	}
	f, _ := n.Float64()
	return f
}
