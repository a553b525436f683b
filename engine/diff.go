package engine

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// Change is one key that differs between two universes, with who wrote it.
type Change struct {
	Key    string `json:"key"`
	Old    string `json:"old"`
	New    string `json:"new"`
	Writer string `json:"writer,omitempty"`
	// Secret is set when the key holds a secret (model.SecretKey, or a
	// config option of type secret): answers to people show Old and New
	// redacted (Redacted).
	Secret bool `json:"secret,omitempty"`
}

func (c Change) String() string {
	s := fmt.Sprintf("%s: %s -> %s", c.Key, c.Old, c.New)
	if c.Writer != "" {
		s += " (written by " + c.Writer + ")"
	}
	return s
}

// Diff lists the keys that differ between two universes of one unit, over
// the same parts Hash covers: what explains why a unit is stale, and which
// keys keep changing when it diverges. A nil before means "never seen".
func Diff(before, after *charmapi.Universe) []Change {
	if before == nil {
		before = &charmapi.Universe{}
	}
	var out []Change
	add := func(key, o, n, writer string) {
		if o != n {
			out = append(out, Change{Key: key, Old: o, New: n, Writer: writer})
		}
	}
	// bag adds a change of a settings key, secret as its name says.
	bag := func(key, k, o, n, writer string) {
		if o != n {
			out = append(out, Change{Key: key, Old: o, New: n, Writer: writer, Secret: model.SecretKey(k)})
		}
	}
	add("life", before.Life, after.Life, "")
	add("leader", fmt.Sprint(before.Leader), fmt.Sprint(after.Leader), "")
	add("charm", before.Charm, after.Charm, "")
	for _, k := range unionKeys(before.Resources, after.Resources) {
		add("resources."+k, before.Resources[k], after.Resources[k], "operator")
	}
	for _, k := range unionKeys(before.Config, after.Config) {
		add("config."+k, show(before.Config, k), show(after.Config, k), "operator")
	}
	if !after.Leader {
		for _, k := range unionKeys(before.LeaderData, after.LeaderData) {
			bag("leader_data."+k, k, show(before.LeaderData, k), show(after.LeaderData, k), "leader of "+after.Service)
		}
	}
	old := map[string]*charmapi.Relation{}
	for i := range before.Relations {
		old[before.Relations[i].Ident] = &before.Relations[i]
	}
	seen := map[string]bool{}
	for i := range after.Relations {
		r := &after.Relations[i]
		seen[r.Ident] = true
		o := old[r.Ident]
		if o == nil {
			add("relations."+r.Ident, "(absent)", "(present)", "")
			o = &charmapi.Relation{}
		}
		p := "relations." + r.Ident
		if !after.Leader {
			for _, k := range unionKeys(o.App, r.App) {
				bag(p+".app."+k, k, show(o.App, k), show(r.App, k), "leader of "+after.Service)
			}
		}
		for _, k := range unionKeys(o.RemoteApp, r.RemoteApp) {
			bag(p+".remote_app."+k, k, show(o.RemoteApp, k), show(r.RemoteApp, k), "leader of "+r.RemoteService)
		}
		for _, unit := range unionKeys(o.Units, r.Units) {
			ou, nu := o.Units[unit], r.Units[unit]
			if ou == nil && nu != nil {
				add(p+".units."+unit, "(absent)", "(member)", "")
			}
			if nu == nil && ou != nil {
				add(p+".units."+unit, "(member)", "(absent)", "")
				continue
			}
			for _, k := range unionKeys(ou, nu) {
				if ou == nil && k == "private-address" {
					continue
				}
				bag(p+".units."+unit+"."+k, k, show(ou, k), show(nu, k), unit)
			}
		}
	}
	for _, r := range before.Relations {
		if !seen[r.Ident] {
			add("relations."+r.Ident, "(present)", "(absent)", "")
		}
	}
	return append(out, secretChanges(before, after)...)
}

// secretChanges lists, for Diff, the secrets that appeared, went or moved
// to another revision: by id and revision number, never content.
func secretChanges(before, after *charmapi.Universe) []Change {
	revs := func(u *charmapi.Universe) map[string]string {
		m := map[string]string{}
		for _, s := range u.Secrets {
			m[s.ID] = "revision " + strconv.Itoa(s.Revision) + " of " + strconv.Itoa(s.Latest)
		}
		return m
	}
	o, n := revs(before), revs(after)
	var out []Change
	for _, id := range unionKeys(o, n) {
		ov, ok := o[id]
		if !ok {
			ov = "(absent)"
		}
		nv, ok := n[id]
		if !ok {
			nv = "(absent)"
		}
		if ov != nv {
			out = append(out, Change{Key: "secrets." + id, Old: ov, New: nv})
		}
	}
	return out
}

func unionKeys[V any](a, b map[string]V) []string {
	m := map[string]bool{}
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func show[V any](m map[string]V, k string) string {
	v, ok := m[k]
	if !ok {
		return "(unset)"
	}
	return fmt.Sprintf("%q", fmt.Sprint(v))
}
