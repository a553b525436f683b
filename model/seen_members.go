package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
)

// MaxSeenMembers bounds the members one decoded Members may name: ranges
// are compact, so a short string could otherwise stand for billions.
const MaxSeenMembers = 1 << 20

// Members is a set of unit names held compactly: units "svc/N" as ranges
// of numbers per service, "db/0-2,4-49" (a peer sees all its service's
// units but itself, which is two ranges however large the service). It
// holds its canonical text as a plain string, not interned: a peer's set
// is its own (all but itself), so an intern table would keep an entry per
// unit, several times the text. The zero value is the empty set. Members
// are immutable.
//
// Names the model never makes (not "svc/N" with N in plain decimal, or a
// service name holding '/', ' ' or ',') are kept as a plain sorted list.
type Members struct{ t string }

// listMark starts the text of a set kept as a plain list; a canonical
// text never starts with it (services have names).
const listMark = "\x00"

// NewMembers returns the set of names (in any order, duplicates ignored).
func NewMembers(names []string) Members {
	if len(names) == 0 {
		return Members{}
	}
	type unit struct {
		svc string
		n   int
	}
	units := make([]unit, 0, len(names))
	for _, name := range names {
		svc, n, ok := canonicalUnit(name)
		if !ok {
			return newList(names)
		}
		units = append(units, unit{svc, n})
	}
	if !slices.IsSortedFunc(units, func(a, b unit) int { return cmpUnit(a.svc, a.n, b.svc, b.n) }) {
		units = slices.Clone(units)
		slices.SortFunc(units, func(a, b unit) int { return cmpUnit(a.svc, a.n, b.svc, b.n) })
	}
	var b strings.Builder
	for i := 0; i < len(units); {
		svc := units[i].svc
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(svc)
		b.WriteByte('/')
		first := true
		for i < len(units) && units[i].svc == svc {
			lo := units[i].n
			hi := lo
			for i++; i < len(units) && units[i].svc == svc && units[i].n <= hi+1; i++ {
				hi = max(hi, units[i].n)
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			b.WriteString(strconv.Itoa(lo))
			if hi > lo {
				b.WriteByte('-')
				b.WriteString(strconv.Itoa(hi))
			}
		}
	}
	return Members{b.String()}
}

func cmpUnit(sa string, na int, sb string, nb int) int {
	if c := strings.Compare(sa, sb); c != 0 {
		return c
	}
	return na - nb
}

// newList keeps names as a sorted list, for names the ranges cannot hold.
func newList(names []string) Members {
	sorted := slices.Clone(names)
	slices.SortFunc(sorted, CompareUnits)
	sorted = slices.Compact(sorted)
	return Members{listMark + strings.Join(sorted, listMark)}
}

// canonicalUnit splits "svc/N" when ranges can hold it.
func canonicalUnit(name string) (svc string, n int, ok bool) {
	svc, num, found := strings.Cut(name, "/")
	if !found || svc == "" || strings.ContainsAny(svc, " ,"+listMark) {
		return "", 0, false
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 || strconv.Itoa(n) != num {
		return "", 0, false
	}
	return svc, n, true
}

// text is the canonical text, "" for the empty set.
func (m Members) text() string { return m.t }

// IsEmpty reports whether the set has no members.
func (m Members) IsEmpty() bool { return m.t == "" }

// String is the canonical text, "db/0-2,4-49"; a list is shown spaced.
func (m Members) String() string {
	t := m.text()
	if strings.HasPrefix(t, listMark) {
		return strings.Join(strings.Split(t[1:], listMark), " ")
	}
	return t
}

// All yields the members in UnitLess order.
func (m Members) All() iter.Seq[string] {
	return func(yield func(string) bool) {
		t := m.text()
		if strings.HasPrefix(t, listMark) {
			for _, name := range strings.Split(t[1:], listMark) {
				if !yield(name) {
					return
				}
			}
			return
		}
		for group := range strings.SplitSeq(t, " ") {
			if group == "" {
				continue
			}
			svc, ranges, _ := strings.Cut(group, "/")
			for r := range strings.SplitSeq(ranges, ",") {
				lo, hi := parseRange(r)
				for n := lo; n <= hi; n++ {
					if !yield(svc + "/" + strconv.Itoa(n)) {
						return
					}
				}
			}
		}
	}
}

// Len is the number of members.
func (m Members) Len() int {
	t := m.text()
	if t == "" {
		return 0
	}
	if strings.HasPrefix(t, listMark) {
		return strings.Count(t, listMark)
	}
	total := 0
	for group := range strings.SplitSeq(t, " ") {
		_, ranges, _ := strings.Cut(group, "/")
		for r := range strings.SplitSeq(ranges, ",") {
			lo, hi := parseRange(r)
			total += hi - lo + 1
		}
	}
	return total
}

// Has reports whether name is a member.
func (m Members) Has(name string) bool {
	t := m.text()
	if strings.HasPrefix(t, listMark) {
		for _, n := range strings.Split(t[1:], listMark) {
			if n == name {
				return true
			}
		}
		return false
	}
	svc, n, ok := canonicalUnit(name)
	if !ok {
		return false
	}
	for group := range strings.SplitSeq(t, " ") {
		gsvc, ranges, _ := strings.Cut(group, "/")
		if gsvc != svc {
			continue
		}
		for r := range strings.SplitSeq(ranges, ",") {
			if lo, hi := parseRange(r); lo <= n && n <= hi {
				return true
			}
		}
	}
	return false
}

// parseRange reads "a" or "a-b" of a text already checked by parseMembers.
func parseRange(r string) (lo, hi int) {
	a, b, isRange := strings.Cut(r, "-")
	lo, _ = strconv.Atoi(a)
	hi = lo
	if isRange {
		hi, _ = strconv.Atoi(b)
	}
	return lo, hi
}

// MarshalJSON writes the canonical text, or a list of names when the set
// is kept as one.
func (m Members) MarshalJSON() ([]byte, error) {
	t := m.text()
	if strings.HasPrefix(t, listMark) {
		return json.Marshal(strings.Split(t[1:], listMark))
	}
	return json.Marshal(t)
}

// UnmarshalJSON reads what MarshalJSON writes. The text is checked, and
// rewritten canonically, so that a set has one text and every other
// method may trust it.
func (m *Members) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && data[0] == '[' {
		var names []string
		if err := json.Unmarshal(data, &names); err != nil {
			return fmt.Errorf("seen units: %w", err)
		}
		if len(names) > MaxSeenMembers {
			return fmt.Errorf("seen units: %d names; the limit is %d", len(names), MaxSeenMembers)
		}
		*m = NewMembers(names)
		return nil
	}
	var t string
	if err := json.Unmarshal(data, &t); err != nil {
		return fmt.Errorf("seen units: %w", err)
	}
	canon, err := parseMembers(t)
	if err != nil {
		return fmt.Errorf("seen units %s: %w", Quote(t, 64), err)
	}
	*m = canon
	return nil
}

// parseMembers checks a canonical text and returns its set; a text that
// is valid but not canonical (unsorted, overlapping) is normalised.
func parseMembers(t string) (Members, error) {
	if t == "" {
		return Members{}, nil
	}
	canonical := true
	total := 0
	prevSvc, prevHi := "", -1
	for group := range strings.SplitSeq(t, " ") {
		svc, ranges, ok := strings.Cut(group, "/")
		if !ok || svc == "" || strings.Contains(svc, ",") || strings.Contains(svc, listMark) || ranges == "" {
			return Members{}, errors.New(`want "service/ranges" groups separated by spaces, ranges like "0-2,4"`)
		}
		if svc < prevSvc || (svc == prevSvc && prevSvc != "") {
			canonical = false
		}
		if svc != prevSvc {
			prevHi = -1
		}
		prevSvc = svc
		for r := range strings.SplitSeq(ranges, ",") {
			a, b, isRange := strings.Cut(r, "-")
			lo, okA := plainNumber(a)
			hi, okB := lo, true
			if isRange {
				hi, okB = plainNumber(b)
			}
			if !okA || !okB || hi < lo || (isRange && hi == lo) {
				return Members{}, fmt.Errorf("%s is not a unit number or a rising range of them", Quote(r, 24))
			}
			if lo <= prevHi+1 {
				canonical = false
			}
			prevHi = max(prevHi, hi)
			total += hi - lo + 1
			if total > MaxSeenMembers {
				return Members{}, fmt.Errorf("more than %d members", MaxSeenMembers)
			}
		}
	}
	m := Members{t}
	if !canonical {
		m = NewMembers(slices.Collect(m.All()))
	}
	return m, nil
}

// plainNumber reads a non-negative decimal number without leading zeros.
func plainNumber(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0 && strconv.Itoa(n) == s
}
