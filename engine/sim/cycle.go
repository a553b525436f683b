package sim

import (
	"sort"
	"strings"
)

// findCycle finds the last time the settings came back to what they were
// at an earlier step, and returns the steps in between: what keeps
// repeating. Steps that changed nothing are left out.
func findCycle(steps []Step, fps []string) *Cycle {
	seen := map[string]int{fps[0]: 0}
	from, to := -1, -1
	for k := 1; k < len(fps); k++ {
		if len(steps[k-1].Changes) == 0 {
			continue
		}
		if at, ok := seen[fps[k]]; ok {
			from, to = at, k
		}
		seen[fps[k]] = k
	}
	if from < 0 {
		return nil
	}
	c := &Cycle{From: from, To: to}
	counts := map[string]*Key{}
	for _, st := range steps[from:to] {
		if len(st.Changes) == 0 {
			continue
		}
		c.Steps = append(c.Steps, st)
		for _, ch := range st.Changes {
			if !wakes(ch.Key) {
				continue
			}
			k := counts[ch.Key]
			if k == nil {
				k = &Key{Key: ch.Key, Writer: ch.Writer}
				counts[ch.Key] = k
			}
			k.Changes++
		}
	}
	c.Keys = sortedKeyCounts(counts)
	return c
}

// recentChurn counts the key changes over the last n steps that changed
// anything: what never settled when there is no cycle (a timestamp
// changes forever without coming back).
func recentChurn(steps []Step, n int) []Key {
	counts := map[string]*Key{}
	seen := 0
	for i := len(steps) - 1; i >= 0 && seen < n; i-- {
		if len(steps[i].Changes) == 0 {
			continue
		}
		seen++
		for _, ch := range steps[i].Changes {
			if !wakes(ch.Key) {
				continue
			}
			k := counts[ch.Key]
			if k == nil {
				k = &Key{Key: ch.Key, Writer: ch.Writer}
				counts[ch.Key] = k
			}
			k.Changes++
		}
	}
	return sortedKeyCounts(counts)
}

// wakes reports whether a flatState key is one other units see (relation
// settings, application bags, leader data), as opposed to a unit's status,
// state or ports, which wake nobody.
func wakes(key string) bool {
	return strings.Contains(key, " relations.") || strings.Contains(key, " leader_data.")
}

func sortedKeyCounts(m map[string]*Key) []Key {
	out := make([]Key, 0, len(m))
	for _, k := range m {
		out = append(out, *k)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Changes != out[j].Changes {
			return out[i].Changes > out[j].Changes
		}
		return out[i].Key < out[j].Key
	})
	return out
}
