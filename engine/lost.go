package engine

import "sort"

// lostUnits gathers the units on lost machines, machine by machine,
// keeping the first limit units of each by name (all when limit <= 0).
type lostUnits struct {
	limit int
	by    map[string]*machineUnits
}

// machineUnits is one machine's units as lostUnits gathers them.
type machineUnits struct {
	first []UnitBrief
	n     int
}

// add records that unit waits on the lost machine.
func (l *lostUnits) add(machine, unit string) {
	if l.by == nil {
		l.by = map[string]*machineUnits{}
	}
	m := l.by[machine]
	if m == nil {
		m = &machineUnits{}
		l.by[machine] = m
	}
	m.n++
	if l.limit <= 0 {
		m.first = append(m.first, UnitBrief{Unit: unit})
		return
	}
	m.first = keepFirst(m.first, UnitBrief{Unit: unit}, l.limit, briefByName)
}

// list is what was gathered, by machine name; nil when no unit waits on
// a lost machine.
func (l *lostUnits) list() []LostMachine {
	if len(l.by) == 0 {
		return nil
	}
	out := make([]LostMachine, 0, len(l.by))
	for name, m := range l.by {
		if l.limit <= 0 {
			sort.Slice(m.first, func(i, j int) bool { return briefByName(m.first[i], m.first[j]) })
		}
		units := make([]string, len(m.first))
		for i, u := range m.first {
			units[i] = u.Unit
		}
		out = append(out, LostMachine{Machine: name, Units: units, MoreUnits: m.n - len(units)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Machine < out[j].Machine })
	return out
}
