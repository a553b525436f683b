package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/model"
)

// flatState lists every setting in the state, one key each, named by who
// writes it and where it sits in that writer's result:
//
//	db/0 relations.db:1.local.host        a unit's settings
//	db relations.cluster:0.app.primary    a service's bag (its leader writes it)
//	db leader_data.k                      leader data
//	db/0 status, db/0 state.k, db/0 ports
func flatState(st *model.State) map[string]string {
	out := map[string]string{}
	for _, name := range st.SortedUnits() {
		u := st.Units[name]
		for id, b := range u.Settings.All() {
			if b == nil {
				continue
			}
			ident := "relation-" + strconv.Itoa(id)
			if r := st.Relations[id]; r != nil {
				ident = r.Ident(u.Service)
			}
			for k, v := range b.All() {
				out[name+" relations."+ident+".local."+k] = v
			}
		}
		if u.Status.State != "" {
			out[name+" status"] = charmapi.Status{State: u.Status.State, Message: u.Status.Message}.String()
		}
		for k, v := range u.State {
			out[name+" state."+k] = v
		}
		if len(u.Ports) > 0 {
			out[name+" ports"] = strings.Join(u.Ports, " ")
		}
	}
	for _, r := range st.Relations {
		for svc, b := range r.App {
			if b == nil {
				continue
			}
			for k, v := range b.All() {
				out[svc+" relations."+r.Ident(svc)+".app."+k] = v
			}
		}
	}
	for name, svc := range st.Services {
		for k, v := range svc.LeaderData.All() {
			out[name+" leader_data."+k] = v
		}
	}
	return out
}

// flatResult lists a result's fields one key each, as in the result JSON:
// relations.db:1.local.host, status, state.k, ports, leader_data.k.
func flatResult(r *charmapi.Result) map[string]string {
	out := map[string]string{}
	for ident, rr := range r.Relations {
		if rr.Local != nil {
			out["relations."+ident+".local"] = "(written)"
		}
		for k, v := range rr.Local {
			out["relations."+ident+".local."+k] = v
		}
		if rr.App != nil {
			out["relations."+ident+".app"] = "(written)"
		}
		for k, v := range rr.App {
			out["relations."+ident+".app."+k] = v
		}
	}
	for k, v := range r.LeaderData {
		out["leader_data."+k] = v
	}
	if r.Status != nil {
		out["status"] = r.Status.String()
	}
	for k, v := range r.State {
		out["state."+k] = v
	}
	if r.Ports != nil {
		out["ports"] = strings.Join(r.Ports, " ")
	}
	return out
}

// diffFlat lists the keys whose values differ, with who writes them.
func diffFlat(a, b map[string]string) []engine.Change {
	var out []engine.Change
	for _, k := range slices.Sorted(maps.Keys(merge(a, b))) {
		o, ook := a[k]
		n, nok := b[k]
		if ook == nok && o == n {
			continue
		}
		c := engine.Change{Key: k, Old: "(unset)", New: "(unset)", Writer: writerOf(k)}
		if ook {
			c.Old = strconv.Quote(o)
		}
		if nok {
			c.New = strconv.Quote(n)
		}
		out = append(out, c)
	}
	return out
}

// writerOf says who writes a flatState key: a unit its own, the leader
// of a service the service's.
func writerOf(key string) string {
	owner, _, ok := strings.Cut(key, " ")
	switch {
	case !ok:
		return ""
	case strings.Contains(owner, "/"):
		return owner
	}
	return "the leader of " + owner
}

func digestFlat(m map[string]string) string {
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(h, "%q=%q\n", k, m[k])
	}
	return hex.EncodeToString(h.Sum(nil)[:6])
}

func merge(a, b map[string]string) map[string]string {
	m := maps.Clone(a)
	if m == nil {
		m = map[string]string{}
	}
	maps.Copy(m, b)
	return m
}
