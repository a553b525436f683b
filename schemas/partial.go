package schemas

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
)

// partial returns what of the user's environment the problems leave
// readable: the user's value as data with every field a problem names
// left out (a list with a wrong element, the whole list), decoded. The
// charm and relation checks then run on the rest, so that one run of vet
// reports a config typo next to a units typo. It returns nil when the
// value is not plain data or a problem has no path to leave out.
func partial(user cue.Value, problems []Problem) *Env {
	data, err := user.MarshalJSON()
	if err != nil {
		return nil
	}
	var root map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if dec.Decode(&root) != nil {
		return nil
	}
	for _, p := range problems {
		path, ok := parsePath(p.Path)
		if !ok || len(path) == 0 {
			return nil
		}
		leaveOut(root, path)
	}
	if data, err = json.Marshal(root); err != nil {
		return nil
	}
	env, err := decodeJSON(data)
	if err != nil {
		return nil
	}
	return &Env{Env: env}
}

// leaveOut deletes the field at path from m: the field itself, or the
// nearest field above it that holds a list or a plain value where path
// goes on.
func leaveOut(m map[string]any, path []string) {
	for i, label := range path {
		next, ok := m[label]
		if !ok {
			return
		}
		sub, isMap := next.(map[string]any)
		if i == len(path)-1 || !isMap {
			delete(m, label)
			return
		}
		m = sub
	}
}

// parsePath reads a path FormatPath printed back into raw labels.
func parsePath(s string) ([]string, bool) {
	var out []string
	for s != "" {
		if strings.HasPrefix(s, `"`) {
			q, err := strconv.QuotedPrefix(s)
			if err != nil {
				return nil, false
			}
			label, _ := strconv.Unquote(q)
			out = append(out, label)
			s = s[len(q):]
		} else {
			label, _, _ := strings.Cut(s, ".")
			out = append(out, label)
			s = s[len(label):]
		}
		if s == "" {
			break
		}
		if s[0] != '.' {
			return nil, false
		}
		s = s[1:]
	}
	return out, true
}

// Merge adds the problems of a later check that no problem of e already
// names, at their path or above it: a check of what partial left reports
// what the first check could not see, not the same mistake again.
func (e *Error) Merge(more []Problem) {
	first := e.Problems
	for _, p := range more {
		if !coveredBy(p, first) {
			e.Problems = append(e.Problems, p)
		}
	}
	e.Sort()
}
