package model

import (
	"fmt"
	"strconv"
	"strings"
)

// ListedUnits is how many unit names UnitList prints in full; longer lists
// are summarised by their first and last name and their count.
const ListedUnits = 10

// UnitList prints unit names for people: all of them, comma-separated, up
// to ListedUnits; beyond, "web/3 … web/99999 (99,997 units)", so that a
// plan for a service of 100,000 units is a line, not a megabyte.
func UnitList(units []string) string {
	if len(units) <= ListedUnits {
		return strings.Join(units, ", ")
	}
	return fmt.Sprintf("%s … %s (%s units)", units[0], units[len(units)-1], Thousands(len(units)))
}

// Thousands prints n with commas between groups of three digits.
func Thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// DefaultWarnUnits is the unit count per service above which vet and plan
// warn: legal up to the limits, but more than most environments mean.
const DefaultWarnUnits = 1000

// LargeServices warns about every service of e that asks for more than
// over units (over < 1: never), at its units field: a number of that size
// is more often a typo than a plan, and each unit is a record every
// replica keeps.
func (e *Environment) LargeServices(over int) Problems {
	var ps Problems
	if over < 1 {
		return nil
	}
	for _, name := range sortedKeys(e.Services) {
		if n := e.Services[name].Units; n != nil && *n > over {
			ps.add([]string{"services", name, "units"}, "%s units, more than %s per service: is that meant? Each unit is a record every replica keeps and a process on a machine (--warn-units N raises this warning, 0 turns it off)", Thousands(*n), Thousands(over))
		}
	}
	return ps
}
