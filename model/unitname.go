package model

import (
	"strconv"
	"strings"
)

// The unit-name rule is also charmapi's (ServiceOf, UnitNumber, UnitLess),
// which charms use to list units. Both packages must stay leaves of the
// module, so each keeps its copy and TestUnitNamesAgreeWithCharmapi holds
// them to the same answers.

// UnitLess orders unit names by service, then numerically: web/2 before
// web/10, so that the engine and the charms order units alike.
func UnitLess(a, b string) bool {
	sa, sb := ServiceOf(a), ServiceOf(b)
	if sa != sb {
		return sa < sb
	}
	na, nb := unitNumber(a), unitNumber(b)
	if na != nb {
		return na < nb
	}
	return a < b
}

// CompareUnits is UnitLess as a comparison, for slices.SortFunc.
func CompareUnits(a, b string) int {
	switch {
	case UnitLess(a, b):
		return -1
	case UnitLess(b, a):
		return 1
	}
	return 0
}

// ServiceOf returns the service part of a unit name: "web" for "web/3".
func ServiceOf(unit string) string {
	svc, _, _ := strings.Cut(unit, "/")
	return svc
}

// unitNumber returns N of "service/N", or -1 when unit is not of that form.
func unitNumber(unit string) int {
	i := strings.LastIndexByte(unit, '/')
	if i < 0 {
		return -1
	}
	n, err := strconv.Atoi(unit[i+1:])
	if err != nil || n < 0 {
		return -1
	}
	return n
}
