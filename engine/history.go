package engine

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fixpoint/fixpoint/engine/waiters"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// DefaultHistory is how many runs of each unit the history keeps.
const DefaultHistory = 50

// Caps that keep one run small: the history lives in the leader's memory.
const (
	maxRunStderr  = 2 << 10
	maxRunChanges = 40
)

// History keeps the last runs of every unit, bounded per unit. It is soft
// state of the leader's controller: a new leader starts an empty one.
type History struct {
	max int

	mu      sync.Mutex
	seq     uint64
	units   map[string]unitRuns
	changed waiters.Broadcast
	observe []func(Run)
	// shared holds one copy of each key and short value the kept runs'
	// changes repeat (a relation's key in every unit of its service, a
	// status many units show), so that each run holds its own copies
	// of only what is its own.
	shared map[string]string
	// sharedChanges holds one copy of each change of only such strings
	// (a status every unit of a service takes), so that runs that make
	// the same change refer to one.
	sharedChanges map[Change]*Change
}

// Bounds of History.shared and History.sharedChanges: values longer than
// maxShared are a unit's own as a rule, and a table is emptied when it
// holds maxSharedN entries, so that keys a charm makes up on every run
// cost no more.
const (
	maxShared  = 96
	maxSharedN = 1 << 14
)

// share returns the history's copy of s, making s it if there is none.
// h.mu is held.
func (h *History) share(s string) string {
	if len(s) > maxShared {
		return s
	}
	if c, ok := h.shared[s]; ok {
		return c
	}
	if len(h.shared) >= maxSharedN {
		clear(h.shared)
	}
	h.shared[s] = s
	return s
}

// shareChange returns the history's copy of c if c's strings are all
// shared, making c it if there is none, and otherwise a copy of c that is
// its run's own, its short strings shared. h.mu is held.
func (h *History) shareChange(c Change) *Change {
	long := max(len(c.Key), len(c.Old), len(c.New), len(c.Writer)) > maxShared
	if !long {
		if p, ok := h.sharedChanges[c]; ok {
			return p
		}
	}
	p := &Change{Key: h.share(c.Key), Old: h.share(c.Old), New: h.share(c.New), Writer: h.share(c.Writer), Secret: c.Secret}
	if long {
		return p
	}
	if len(h.sharedChanges) >= maxSharedN {
		clear(h.sharedChanges)
	}
	h.sharedChanges[*p] = p
	return p
}

// keep makes r's kept form. h.mu is held.
func (h *History) keep(r *Run) keptRun {
	k := keptRun{seq: r.Seq, dur: r.Duration}
	whole := r.Service != model.ServiceOf(r.Unit)
	if o, ok := outcomeOf(r.Outcome); ok {
		k.outcome = o
	} else {
		whole = true
	}
	switch loc := r.Time.Location(); {
	case r.Time.IsZero() && loc == time.UTC:
	case loc != time.Local && loc != time.UTC:
		whole = true
	default:
		k.at = r.Time.UnixNano()
		if !time.Unix(0, k.at).Equal(r.Time) {
			whole = true
		} else if loc == time.Local {
			k.flags |= keptLocal
		} else {
			k.flags |= keptUTC
		}
	}
	if r.Hash != "" {
		if decodeHash(r.Hash, &k.hash) {
			k.flags |= keptHashHex
		} else {
			whole = true
		}
	}
	if len(r.Changes) > 0 {
		k.changes = make([]*Change, len(r.Changes))
		for i, c := range r.Changes {
			k.changes[i] = h.shareChange(c)
		}
	}
	switch {
	case whole:
		w := *r
		w.Changes = nil
		k.more = &keptMore{whole: &w}
	case r.Error != "" || r.Stderr != "" || r.Omitted != 0:
		k.more = &keptMore{err: r.Error, stderr: r.Stderr, omitted: r.Omitted}
	}
	return k
}

// NewHistory keeps up to max runs per unit (DefaultHistory if max <= 0).
func NewHistory(max int) *History {
	if max <= 0 {
		max = DefaultHistory
	}
	return &History{max: max, units: map[string]unitRuns{}, changed: waiters.NewBroadcast(), shared: map[string]string{}, sharedChanges: map[Change]*Change{}}
}

// Observe calls fn with every run added from now on (metrics use it). fn
// must not block.
func (h *History) Observe(fn func(Run)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.observe = append(h.observe, fn)
}

// Add appends runs, numbering them, and wakes whoever waits for them.
func (h *History) Add(runs ...Run) {
	if len(runs) == 0 {
		return
	}
	h.mu.Lock()
	for i := range runs {
		h.seq++
		runs[i].Seq = h.seq
		h.units[runs[i].Unit] = h.units[runs[i].Unit].add(h.keep(&runs[i]), h.max)
	}
	observe := h.observe
	h.changed.Notify()
	h.mu.Unlock()
	for _, r := range runs {
		for _, fn := range observe {
			fn(r)
		}
	}
}

// Match reports whether a run of unit is selected by filter: "" selects
// every unit, "svc" every unit of a service, "svc/N" one unit.
func Match(filter, unit string) bool {
	if filter == "" || filter == unit {
		return true
	}
	return !strings.Contains(filter, "/") && strings.HasPrefix(unit, filter+"/")
}

// Runs returns the kept runs selected by filter with Seq > after, oldest
// first, and the last Seq given out.
func (h *History) Runs(filter string, after uint64) ([]Run, uint64) {
	// The kept runs are copied under the lock and made Runs outside it:
	// what a kept run refers to is never written once kept.
	type selected struct {
		unit string
		runs unitRuns
		from int
	}
	var units []selected
	n := 0
	h.mu.Lock()
	seq := h.seq
	pick := func(unit string, u unitRuns) {
		from := u.upTo(after)
		if from < len(u) {
			units = append(units, selected{unit, u, from})
			n += len(u) - from
		}
	}
	if strings.Contains(filter, "/") {
		// Only the unit itself matches.
		if u, ok := h.units[filter]; ok {
			pick(filter, u)
		}
	} else {
		for unit, u := range h.units {
			if Match(filter, unit) {
				pick(unit, u)
			}
		}
	}
	sel := make([]unitRun, 0, n)
	for _, s := range units {
		sel = s.runs.appendFrom(sel, s.unit, s.from)
	}
	h.mu.Unlock()
	return runsOf(sel), seq
}

// Wait returns the runs selected by filter with Seq > after, blocking
// until there is one or ctx ends (then it returns none, and no error).
func (h *History) Wait(ctx context.Context, filter string, after uint64) ([]Run, uint64) {
	for {
		h.mu.Lock()
		ch := h.changed.Wait()
		h.mu.Unlock()
		runs, seq := h.Runs(filter, after)
		if len(runs) > 0 {
			return runs, seq
		}
		select {
		case <-ctx.Done():
			return nil, seq
		case <-ch:
		}
	}
}

// record turns one batch of machine's reports into runs, diffing each
// result against the state it is about to replace. Results are matched to
// reports by unit; a report without a result was stale. Reports for units
// machine does not run are not recorded at all: an agent writes only into
// its own units' history, and never invents a unit or a service there.
func (h *History) record(store Store, machine string, reports []wire.Report, results []model.Result, now time.Time) {
	byUnit := make(map[string]*model.Result, len(results))
	for i := range results {
		byUnit[results[i].Unit] = &results[i]
	}
	runs := make([]Run, 0, len(reports))
	_ = store.View(func(st *model.State) error {
		for _, rep := range reports {
			u := st.Units[rep.Unit]
			if u == nil || u.Machine != machine {
				continue
			}
			run := Run{Unit: u.Name, Service: u.Service, Time: now, Hash: rep.Hash, Duration: rep.Duration, Stderr: tail(rep.Stderr, maxRunStderr)}
			res := byUnit[rep.Unit]
			switch {
			case res == nil:
				run.Outcome = RunStale
			case res.Error != "":
				run.Outcome, run.Error = RunError, res.Error
			default:
				run.Outcome = RunOK
				run.Changes = resultChanges(st, res)
				if n := len(run.Changes); n > maxRunChanges {
					run.Changes, run.Omitted = run.Changes[:maxRunChanges:maxRunChanges], n-maxRunChanges
				}
			}
			runs = append(runs, run)
		}
		h.prune(st)
		return nil
	})
	h.Add(runs...)
}

// prune forgets units removed from st once they outnumber the live ones,
// keeping the history bounded however many units come and go.
func (h *History) prune(st *model.State) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.units) <= 2*len(st.Units)+16 {
		return
	}
	for u := range h.units {
		if _, ok := st.Units[u]; !ok {
			delete(h.units, u)
		}
	}
}

// resultChanges lists what res changes in st, key by key.
func resultChanges(st *model.State, res *model.Result) []Change {
	u := st.Units[res.Unit]
	if u == nil {
		return nil
	}
	svc := st.Services[u.Service]
	var out []Change
	diff := func(prefix string, old, new map[string]string) {
		for _, k := range unionKeys(old, new) {
			if o, n := show(old, k), show(new, k); o != n {
				out = append(out, Change{Key: prefix + k, Old: o, New: n, Secret: model.SecretKey(k)})
			}
		}
	}
	if res.Status != nil && *res.Status != u.Status {
		out = append(out, Change{Key: "status", Old: statusText(u.Status), New: statusText(*res.Status)})
	}
	for _, id := range sortedInts(res.Settings) {
		diff("relations."+relationIdent(st, u.Service, id)+".local.", bagData(u.Settings.Get(id)), res.Settings[id])
	}
	for _, id := range sortedInts(res.App) {
		var old *model.Bag
		if rel := st.Relations[id]; rel != nil {
			old = rel.App[u.Service]
		}
		diff("relations."+relationIdent(st, u.Service, id)+".app.", bagData(old), res.App[id])
	}
	if res.LeaderData != nil && svc != nil {
		diff("leader_data.", bagData(svc.LeaderData), res.LeaderData)
	}
	if res.State != nil {
		diff("state.", u.State, res.State)
	}
	if res.Ports != nil {
		ports := append([]string(nil), res.Ports...)
		sort.Strings(ports)
		if o, n := strings.Join(u.Ports, ","), strings.Join(ports, ","); o != n {
			out = append(out, Change{Key: "ports", Old: strconv.Quote(o), New: strconv.Quote(n)})
		}
	}
	return out
}

func statusText(s model.Status) string {
	if s.State == "" {
		return "(unset)"
	}
	if s.Message == "" {
		return strconv.Quote(s.State)
	}
	return strconv.Quote(s.State + ": " + s.Message)
}

func sortedInts[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}

// tail keeps the last n bytes of s, cut at a line start when it can be.
func tail(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
		s = s[i+1:]
	}
	return "…\n" + s
}

// Redacted is r for people: its secret changes redacted, and every one of
// secrets (the values its unit sees, model.State.SecretsOf) and of its
// changes' secret values taken out of its error and stderr (model.Scrub).
func (r Run) Redacted(secrets []string) Run {
	for _, c := range r.Changes {
		if c.Secret {
			for _, s := range []string{c.Old, c.New} {
				if v, err := strconv.Unquote(s); err == nil {
					secrets = append(secrets, v)
				}
			}
		}
	}
	r.Changes = RedactChanges(r.Changes)
	r.Error = model.Scrub(r.Error, secrets)
	r.Stderr = model.Scrub(r.Stderr, secrets)
	return r
}

// relationIdent is how the unit's hook names relation id: "<endpoint>:<id>".
func relationIdent(st *model.State, service string, id int) string {
	if rel := st.Relations[id]; rel != nil {
		for _, ep := range rel.Endpoints {
			if ep.Service == service {
				return fmt.Sprintf("%s:%d", ep.Name, id)
			}
		}
	}
	return fmt.Sprintf("relation:%d", id)
}
