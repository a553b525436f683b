package schemas

import (
	"fmt"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
)

// checkShape walks the user's value next to a schema definition and
// reports unknown fields, missing required fields, structs where lists
// belong (and the reverse) and lists of the wrong length.
//
// CUE reports these as well, but not reliably: when a value has other
// errors it drops "field not allowed" and "field is required" errors
// (cue-lang/cue#3358, #3845), so users would fix mistakes in rounds; and
// it words them as "conflicting values ... (mismatched types list and
// struct)". Deriving the check from the schema keeps the schema the one
// source of truth while every such mistake is reported at once, in words
// taken from the schema's comments.
func checkShape(user, def cue.Value, idx *posIndex) []Problem {
	c := &shapeChecker{idx: idx}
	c.walk(user, def, nil, docText(def))
	return c.out
}

type shapeChecker struct {
	idx *posIndex
	out []Problem
}

func (c *shapeChecker) add(path []string, format string, args ...any) {
	c.out = append(c.out, problemAt(c.idx.lookup(path), path, fmt.Sprintf(format, args...)))
}

func (c *shapeChecker) walk(u, s cue.Value, path []string, doc string) {
	uk, sk := u.IncompleteKind(), s.IncompleteKind()
	if uk == cue.BottomKind || sk == cue.BottomKind {
		return // an error in the user's own value, or no schema here
	}
	container := cue.StructKind | cue.ListKind
	if uk&sk == 0 && (uk|sk)&container != 0 {
		c.add(path, "is %s but must be %s%s", kindName(uk), kindName(sk), hint(doc))
		return
	}
	switch {
	case uk == cue.StructKind && sk&cue.StructKind != 0:
		c.walkStruct(u, s, path, doc)
	case uk == cue.ListKind && sk&cue.ListKind != 0:
		c.walkList(u, s, path, doc)
	}
}

func (c *shapeChecker) walkStruct(u, s cue.Value, path []string, doc string) {
	type field struct {
		sel      cue.Selector
		required bool
	}
	var names []string
	fields := map[string]field{}
	it, err := s.Fields(cue.Optional(true))
	if err != nil {
		return
	}
	for it.Next() {
		sel := it.Selector()
		if !sel.IsString() {
			continue
		}
		n := sel.Unquoted()
		names = append(names, n)
		fields[n] = field{sel, sel.ConstraintType() == cue.RequiredConstraint}
	}
	pattern := s.LookupPath(cue.MakePath(cue.AnyString))

	seen := map[string]bool{}
	ui, err := u.Fields()
	if err != nil {
		return
	}
	for ui.Next() {
		sel := ui.Selector()
		if !sel.IsString() {
			continue
		}
		n := sel.Unquoted()
		seen[n] = true
		sub := append(path[:len(path):len(path)], n)
		f, known := fields[n]
		switch {
		case known:
			sv := s.LookupPath(cue.MakePath(f.sel))
			c.walk(ui.Value(), sv, sub, orDoc(docText(sv), doc))
		case pattern.Exists():
			c.walk(ui.Value(), pattern, sub, orDoc(docText(pattern), doc))
		case !s.Allows(sel):
			c.add(sub, "%s", unknownField(n, names))
		}
	}
	for _, n := range names {
		if f := fields[n]; f.required && !seen[n] {
			sv := s.LookupPath(cue.MakePath(f.sel))
			c.add(append(path[:len(path):len(path)], n), "is missing%s", hint(orDoc(docText(sv), doc)))
		}
	}
}

func (c *shapeChecker) walkList(u, s cue.Value, path []string, doc string) {
	fixed := -1
	if n, err := s.Len().Int64(); err == nil {
		fixed = int(n)
	}
	if fixed >= 0 {
		if n, err := u.Len().Int64(); err == nil && int(n) != fixed {
			c.add(path, "has %d entries but must have %d%s", n, fixed, hint(doc))
			return
		}
	}
	ui, err := u.List()
	if err != nil {
		return
	}
	for i := 0; ui.Next(); i++ {
		var sv cue.Value
		if fixed >= 0 {
			sv = s.LookupPath(cue.MakePath(cue.Index(i)))
		} else {
			sv = s.LookupPath(cue.MakePath(cue.AnyIndex))
		}
		if sv.Exists() {
			c.walk(ui.Value(), sv, append(path[:len(path):len(path)], fmt.Sprint(i)), doc)
		}
	}
}

// schemaAt finds the schema for a raw user path, following pattern
// constraints ([string]: #Service) where the user's label is not a
// declared field. It also returns the comment of the nearest field on the
// way that has one, and whether the whole path was found.
func schemaAt(def cue.Value, path []string) (cue.Value, string, bool) {
	s, doc := def, docText(def)
	for _, label := range path {
		next := cue.Value{}
		if indexRE.MatchString(label) && s.IncompleteKind()&cue.ListKind != 0 {
			i, _ := strconv.Atoi(label)
			if next = s.LookupPath(cue.MakePath(cue.Index(i))); !next.Exists() {
				next = s.LookupPath(cue.MakePath(cue.AnyIndex))
			}
		} else {
			for _, sel := range []cue.Selector{cue.Str(label), cue.Str(label).Optional(), cue.Str(label).Required(), cue.AnyString} {
				if next = s.LookupPath(cue.MakePath(sel)); next.Exists() {
					break
				}
			}
		}
		if !next.Exists() {
			return s, doc, false
		}
		s = next
		doc = orDoc(docText(s), doc)
	}
	return s, doc, true
}

// schemaDoc returns the comment that explains the field at path.
func schemaDoc(def cue.Value, path []string) string {
	_, doc, _ := schemaAt(def, path)
	return doc
}

// fieldNames lists the fields a schema struct declares, in order.
func fieldNames(s cue.Value) []string {
	var names []string
	it, err := s.Fields(cue.Optional(true))
	if err != nil {
		return nil
	}
	for it.Next() {
		if sel := it.Selector(); sel.IsString() {
			names = append(names, sel.Unquoted())
		}
	}
	return names
}

// unknownField words an unknown field the same way wherever it is found.
func unknownField(name string, allowed []string) string {
	return fmt.Sprintf("unknown field %q%s; allowed here: %s", name, didYouMean(name, allowed), strings.Join(allowed, ", "))
}

// docText returns the first paragraph of a value's comment on one line.
func docText(v cue.Value) string {
	for _, cg := range v.Doc() {
		text := strings.TrimSpace(cg.Text())
		if i := strings.Index(text, "\n\n"); i >= 0 {
			text = text[:i]
		}
		return strings.Join(strings.Fields(text), " ")
	}
	return ""
}

func orDoc(doc, parent string) string {
	if doc != "" {
		return doc
	}
	return parent
}

func hint(doc string) string {
	if doc == "" {
		return ""
	}
	return ": " + doc
}

func kindName(k cue.Kind) string {
	var parts []string
	for _, kn := range []struct {
		k    cue.Kind
		name string
	}{
		{cue.StructKind, "a struct {...}"},
		{cue.ListKind, "a list [...]"},
		{cue.StringKind, "a string"},
		{cue.NumberKind, "a number"},
		{cue.IntKind, "a whole number"},
		{cue.FloatKind, "a number"},
		{cue.BoolKind, "true or false"},
		{cue.NullKind, "null"},
	} {
		if k&kn.k == kn.k {
			parts = append(parts, kn.name)
			k &^= kn.k
		}
	}
	switch len(parts) {
	case 0:
		return k.String()
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// didYouMean suggests the allowed name closest to a misspelt one.
func didYouMean(name string, allowed []string) string {
	best := Closest(name, allowed)
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// Closest returns the candidate within two edits of name, the nearest
// first, or "": what a "did you mean" suggests for a misspelt name.
func Closest(name string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := editDistance(name, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
