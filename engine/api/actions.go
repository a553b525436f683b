package api

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/model/fault"
)

// Operations: `fixpoint run` and `fixpoint exec` queue one (POST
// /v1/actions), `operations` and `show-operation` read them (GET
// /v1/actions, GET /v1/actions/{id}), and agents start and finish them
// (POST /v1/agent/actions/{start,finish}).

// Enqueue is the body of POST /v1/actions: an action of Unit's charm with
// Params, or (Exec set) a command to run in Unit's hook context. Unit may
// be SERVICE/leader.
type Enqueue struct {
	Unit   string         `json:"unit"`
	Action string         `json:"action,omitempty"`
	Params map[string]any `json:"params,omitempty"`
	Exec   string         `json:"exec,omitempty"`
}

// StartReq is the body of POST /v1/agent/actions/start: operation ID of
// environment Env ("" the default one).
type StartReq struct {
	ID  int    `json:"id"`
	Env string `json:"env,omitempty"`
}

// MaxOperationWait bounds GET /v1/actions/{id}?wait=.
const MaxOperationWait = 10 * time.Minute

// actionAPI serves operations: operators queue actions and execs and
// read them; agents start and finish them.
type actionAPI struct {
	node Node
	ctl  *engine.Controller
	// agents finds the controller of an agent's operation's environment.
	agents  Agents
	gate    *gate
	catchUp *catchUp
	log     hclog.Logger
}

func (s *actionAPI) routes(mux *router) {
	mux.HandleFunc("POST /v1/actions", s.enqueue)
	mux.HandleFunc("GET /v1/actions", s.operations)
	mux.HandleFunc("GET /v1/actions/{id}", s.operation)
	mux.HandleFunc("POST /v1/agent/actions/start", s.gate.leaderOnly(s.startAction))
	mux.HandleFunc("POST /v1/agent/actions/finish", s.gate.leaderOnly(s.finishAction))
}

func (s *actionAPI) enqueue(w http.ResponseWriter, r *http.Request) {
	s, ok := s.in(w, r)
	if !ok {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, model.MaxCommandBytes)
	var req Enqueue
	if !decode(w, r, &req) {
		return
	}
	e := &model.EnqueueAction{Unit: req.Unit, Name: req.Action, Params: req.Params, Exec: req.Exec}
	if req.Exec != "" {
		if req.Action != "" && req.Action != model.ExecName {
			writeKind(w, fault.KindBadRequest, "an operation runs an action or a command (exec), not both")
			return
		}
		e.Name = model.ExecName
	}
	var refused error
	_ = s.node.View(func(st *model.State) error {
		if svc, ok := strings.CutSuffix(e.Unit, "/leader"); ok {
			sv := st.Services[svc]
			switch {
			case sv == nil:
				refused = fmt.Errorf("service %s does not exist", model.Quote(svc, 24))
			case sv.Leader == "":
				refused = fmt.Errorf("service %s has no leader now; name a unit, or try again once one is elected", svc)
			default:
				e.Unit = sv.Leader
			}
			if refused != nil {
				return nil
			}
		}
		// The params the FSM is given carry the declared defaults.
		if err := (&model.Command{Op: model.OpEnqueue, Enqueue: e}).Validate(); err != nil {
			refused = err
			return nil
		}
		e.Params, refused = st.CheckEnqueue(e)
		return nil
	})
	if refused != nil {
		writeKind(w, fault.KindBadRequest, "%v", refused)
		return
	}
	if e.Name == model.ExecName {
		// Logged without the command, which may carry a secret.
		s.log.Info("exec queued", "unit", e.Unit, "by", principalOf(r).String(), "remote", remote(r), "command_bytes", len(e.Exec))
	}
	propose(s.node, w, r, &model.Command{Op: model.OpEnqueue, Enqueue: e})
}

// operations lists operations, oldest first, filtered by ?unit=,
// ?service= and ?status= (comma-separated).
func (s *actionAPI) operations(w http.ResponseWriter, r *http.Request) {
	s, ok := s.in(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	statuses := map[string]bool{}
	for _, st := range strings.Split(q.Get("status"), ",") {
		switch st {
		case "":
		case model.ActionPending, model.ActionRunning, model.ActionCompleted, model.ActionFailed:
			statuses[st] = true
		default:
			writeKind(w, fault.KindBadRequest, "status=%s: one of pending, running, completed, failed", model.Quote(st, 24))
			return
		}
	}
	unit, svc := q.Get("unit"), q.Get("service")
	out := []model.Action{}
	_ = s.node.View(func(st *model.State) error {
		for _, a := range st.Actions {
			if unit != "" && a.Unit != unit || svc != "" && model.ServiceOf(a.Unit) != svc || len(statuses) > 0 && !statuses[a.Status] {
				continue
			}
			out = append(out, *a)
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	writeJSON(w, http.StatusOK, out)
}

// operation answers one operation; with ?wait=D it waits up to D (at
// most MaxOperationWait) for it to finish first.
func (s *actionAPI) operation(w http.ResponseWriter, r *http.Request) {
	s, ok := s.in(w, r)
	if !ok {
		return
	}
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil || id <= 0 {
		writeKind(w, fault.KindBadRequest, "operation id %s is not a positive number", model.Quote(r.PathValue("id"), 24))
		return
	}
	var wait time.Duration
	if ws := r.URL.Query().Get("wait"); ws != "" {
		if wait, err = time.ParseDuration(ws); err != nil || wait < 0 {
			writeKind(w, fault.KindBadRequest, "wait=%s is not a duration (e.g. 30s)", model.Quote(ws, 24))
			return
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), min(wait, MaxOperationWait))
	defer cancel()
	caughtUp := false
	for {
		var a *model.Action
		var at uint64
		_ = s.node.View(func(st *model.State) error {
			if x := st.Actions[id]; x != nil {
				cp := *x
				a = &cp
			}
			at = st.Index
			return nil
		})
		if a == nil && !caughtUp {
			// An operation acknowledged elsewhere may not have reached
			// this node yet (a follower behind, a new leader applying its
			// predecessor's entries): catch up once before saying no.
			caughtUp = true
			if s.catchUp.wait(r.Context()) == nil {
				continue
			}
		}
		if a == nil {
			writeKind(w, fault.KindNotFound, "operation %d does not exist (or was dropped from its unit's history of %d)", id, model.ActionHistory)
			return
		}
		if a.Finished() || ctx.Err() != nil {
			writeJSON(w, http.StatusOK, a)
			return
		}
		if _, _, err := s.node.WaitIndex(ctx, at); err != nil && ctx.Err() == nil {
			writeStoreError(w, err, "wait for operation")
			return
		}
	}
}

func (s *actionAPI) startAction(w http.ResponseWriter, r *http.Request) {
	machine := r.URL.Query().Get("machine")
	var req StartReq
	if !decode(w, r, &req) {
		return
	}
	start := &model.Command{Op: model.OpStart, Env: req.Env, StartAction: &model.StartAction{ID: req.ID, Machine: machine}}
	ctl := s.controller(w, req.Env, fmt.Sprintf("start operation %d", req.ID))
	if ctl == nil || s.refused(w, r, start, fmt.Sprintf("start operation %d", req.ID)) {
		return
	}
	if err := ctl.StartAction(r.Context(), machine, req.ID); err != nil {
		writeStoreError(w, err, "")
		return
	}
	writeCompact(w, http.StatusOK, struct{}{})
}

func (s *actionAPI) finishAction(w http.ResponseWriter, r *http.Request) {
	machine := r.URL.Query().Get("machine")
	r.Body = http.MaxBytesReader(w, r.Body, model.MaxCommandBytes)
	var rep wire.ActionReport
	if !decode(w, r, &rep) {
		return
	}
	// Judged without the writes, which are decoded only once the
	// operation is known to be this machine's to finish.
	finish := &model.Command{Op: model.OpFinish, Env: rep.Env, Finish: &model.FinishAction{ID: rep.ID, Machine: machine}}
	ctl := s.controller(w, rep.Env, fmt.Sprintf("finish operation %d", rep.ID))
	if ctl == nil || s.refused(w, r, finish, fmt.Sprintf("finish operation %d", rep.ID)) {
		return
	}
	resp, err := ctl.FinishAction(r.Context(), machine, &rep)
	if err != nil {
		writeStoreError(w, err, "")
		return
	}
	writeCompact(w, http.StatusOK, resp)
}

// controller is the controller of environment env's operations, nil
// (answered 409) when this control plane serves no such environment.
func (s *actionAPI) controller(w http.ResponseWriter, env, what string) *engine.Controller {
	if env == "" {
		return s.ctl
	}
	if ctl := s.agents.Controller(env); ctl != nil {
		return ctl
	}
	writeStoreError(w, fmt.Errorf("%w: environment %s is not served by this control plane (removed, or not yet seen)", ErrRefused, model.Quote(env, 72)), what)
	return nil
}

// refused answers 409 when the applied state refuses cmd (admit), so that
// an agent's refused start or finish never reaches the log; what would
// change nothing is proposed, and the FSM answers it. A command of an
// environment other than the default is judged in its environment.
func (s *actionAPI) refused(w http.ResponseWriter, r *http.Request, cmd *model.Command, what string) bool {
	admit := func() error { _, err := model.AdmitOn(r.Context(), s.node, cmd, nil); return err }
	if cmd.Env != "" {
		admit = func() error { _, err := model.AdmitClusterOn(r.Context(), s.node, cmd, nil); return err }
	}
	if err := admit(); err != nil {
		writeStoreError(w, fmt.Errorf("%w: %w", ErrRefused, err), what)
		return true
	}
	return false
}
