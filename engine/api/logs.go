package api

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/model"
)

// Logs is the answer of GET /v1/logs: runs of the leader's history.
type Logs struct {
	// Seq is the last run number the history gave out; ask for runs
	// after it to follow.
	Seq uint64 `json:"seq"`
	// Reset is set when the asked-for position is past the history's end:
	// the leader changed and its history started over.
	Reset bool         `json:"reset,omitempty"`
	Runs  []engine.Run `json:"runs"`
}

// logs serves GET /v1/logs?unit=U&after=SEQ&limit=N&wait=D. unit is a unit,
// a service or empty for all; with wait it blocks until a run after SEQ
// arrives or wait passes.
func (s *statusAPI) logs(w http.ResponseWriter, r *http.Request) {
	s, ok := s.in(w, r)
	if !ok {
		return
	}
	reveal, ok := reveal(s.log, w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	unit := q.Get("unit")
	var after uint64
	if a := q.Get("after"); a != "" {
		var err error
		if after, err = strconv.ParseUint(a, 10, 64); err != nil {
			writeError(w, http.StatusBadRequest, "after=%q is not a number", a)
			return
		}
	}
	limit := 0
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "limit=%q is not a count", l)
			return
		}
		limit = n
	}
	var wait time.Duration
	if ws := q.Get("wait"); ws != "" {
		d, err := time.ParseDuration(ws)
		if err != nil {
			writeError(w, http.StatusBadRequest, "wait=%q is not a duration (e.g. 30s)", ws)
			return
		}
		wait = min(d, 10*time.Minute)
	}
	if unit != "" {
		if err := s.knownUnitOrService(unit); err != nil {
			// A removed unit's runs may still be kept: answer with them
			// rather than refuse, unless there are none.
			if runs, _ := s.ctl.History().Runs(unit, 0); len(runs) == 0 {
				writeError(w, http.StatusNotFound, "%v", err)
				return
			}
		}
	}
	h := s.ctl.History()
	out := Logs{}
	runs, seq := h.Runs(unit, after)
	if after > seq {
		out.Reset = true
		runs, seq = h.Runs(unit, 0)
	} else if len(runs) == 0 && wait > 0 {
		ctx, cancel := context.WithTimeout(r.Context(), wait)
		runs, seq = h.Wait(ctx, unit, after)
		cancel()
	}
	if limit > 0 && len(runs) > limit {
		runs = runs[len(runs)-limit:]
	}
	if runs == nil {
		runs = []engine.Run{}
	}
	if !reveal {
		_ = s.node.View(func(st *model.State) error {
			runs = redactRuns(st, runs)
			return nil
		})
	}
	out.Seq, out.Runs = seq, runs
	writeJSON(w, http.StatusOK, out)
}

// knownUnitOrService says, when name is neither a unit nor a service of
// the environment, which services exist.
func (s *statusAPI) knownUnitOrService(name string) error {
	var names []string
	found := false
	_ = s.node.View(func(st *model.State) error {
		_, unit := st.Units[name]
		_, svc := st.Services[name]
		found = unit || svc
		for n := range st.Services {
			names = append(names, n)
		}
		return nil
	})
	if found {
		return nil
	}
	sort.Strings(names)
	return fmt.Errorf("%s is neither a unit nor a service of the environment (services: %s)", name, strings.Join(names, ", "))
}
