package api

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/model/fault"
)

// DELETE /v1/envs/{env} removes an environment with its units' dying
// hooks (docs/environments.md, part E): it deploys the environment empty
// (its units go dying: stop, remove, relation-departed and -broken run
// on their agents as for any removal), waits up to ?wait= until the
// environment holds no units, services or unfinished operations, then
// drops it (env-remove), which revokes its tokens and drops its secrets
// and documents; each agent then removes the environment's directory.
// Until then it answers 202 with what remains, and the client asks
// again: every step is judged afresh on the applied state, so a repeat,
// a retry and a request to another node are all safe. ?force=1 drops
// the environment as soon as every unit left is on a lost machine,
// without those units' hooks.

// MaxEnvRemoveWait bounds DELETE /v1/envs/{env}?wait=.
const MaxEnvRemoveWait = time.Minute

// EnvRemoval answers DELETE /v1/envs/{env} (202) while the environment's
// units still run their dying hooks.
type EnvRemoval struct {
	Env string `json:"env"`
	// Units, Services and Operations count what the environment still
	// holds; Dying lists some of its units (at most maxListed), Lost
	// those of them on lost machines, which only --force drops.
	Units      int      `json:"units"`
	Services   int      `json:"services"`
	Operations int      `json:"operations"`
	Dying      []string `json:"dying,omitempty"`
	Lost       []string `json:"lost,omitempty"`
}

// maxListed bounds the units an EnvRemoval names.
const maxListed = 20

// remove serves DELETE /v1/envs/{env}: bad input is refused before
// anything is proposed.
func (s *envsAPI) remove(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("env")
	q := r.URL.Query()
	force, err := false, error(nil)
	if fs := q.Get("force"); fs != "" {
		force, err = strconv.ParseBool(fs)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "force=%q is not a boolean; send force=1 to drop the units left on lost machines without their hooks", model.Quote(q.Get("force"), 32))
		return
	}
	wait := time.Duration(0)
	if ws := q.Get("wait"); ws != "" {
		if wait, err = time.ParseDuration(ws); err != nil || wait < 0 {
			writeError(w, http.StatusBadRequest, "wait=%q is not a duration such as 30s", model.Quote(ws, 32))
			return
		}
		wait = min(wait, MaxEnvRemoveWait)
	}
	if !s.leveled(w, "remove environment "+name) {
		return
	}
	if !s.fresh(w, r) {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), wait)
	defer cancel()
	// at is read before what remains, so that a change after the read
	// ends the wait.
	at := s.node.Index()
	left, err := s.emptyEnv(r, name)
	for err == nil {
		if left.Units+left.Services+left.Operations == 0 || force && len(left.Lost) == left.Units {
			break
		}
		if _, _, err = s.node.WaitIndex(ctx, at); err == nil && ctx.Err() == nil {
			at = s.node.Index()
			left, err = s.remains(name)
			continue
		}
		if ctx.Err() != nil && r.Context().Err() == nil {
			writeJSON(w, http.StatusAccepted, left)
			return
		}
		if err == nil {
			err = ctx.Err()
		}
	}
	if err != nil {
		writeStoreError(w, err, "remove environment "+name)
		return
	}
	if force {
		_, err = s.applyCluster(r, &model.Command{Op: model.OpEnvRemove, EnvRemove: &model.EnvRemove{Name: name, Force: true}})
	} else {
		err = s.node.RemoveEnv(r.Context(), name)
	}
	if err != nil {
		writeStoreError(w, err, "")
		return
	}
	s.log.Info("removed environment", "env", name, "force", force, "principal", principalOf(r).String())
	w.WriteHeader(http.StatusNoContent)
}

// remains reads what environment name still holds; a missing or
// default environment is refused with the model's reason.
func (s *envsAPI) remains(name string) (EnvRemoval, error) {
	var out EnvRemoval
	var refused error
	_ = s.node.ViewCluster(func(c *model.Cluster) error {
		e, ok := c.Envs[name]
		switch {
		case !ok && (name == "" || name == c.Default.Name):
			refused = fault.Errorf(fault.KindRefused, "environment %s is the default environment, which is never dropped; deploy an empty environment file to it to remove what it runs", name)
			return nil
		case !ok || e.State == nil:
			_, missing := c.State(name)
			refused = fault.Errorf(fault.KindNotFound, "%v", missing)
			return nil
		}
		st := e.State
		out = EnvRemoval{Env: name, Units: len(st.Units), Services: len(st.Services), Operations: len(st.ActiveActions)}
		for _, unit := range st.SortedUnits() {
			u := st.Units[unit]
			m := st.Machines[u.Machine]
			lost := u.Machine == "" || m == nil || m.Lost
			if lost {
				out.Lost = append(out.Lost, unit)
			}
			if len(out.Dying) < maxListed {
				out.Dying = append(out.Dying, unit)
			}
		}
		return nil
	})
	sort.Strings(out.Lost)
	return out, refused
}

// emptyEnv deploys environment name empty unless it is (its services
// then go as their units finish their dying hooks), and returns what it
// holds.
func (s *envsAPI) emptyEnv(r *http.Request, name string) (EnvRemoval, error) {
	left, err := s.remains(name)
	if err != nil || left.Services == 0 {
		return left, err
	}
	cmd := &model.Command{Op: model.OpDeploy, Env: name, Deploy: &model.Deploy{
		Env:    model.Environment{APIVersion: model.APIVersion, Name: name, Services: map[string]model.ServiceSpec{}},
		Charms: map[string]*model.Charm{}, Record: true}}
	desired, err := cmd.Check()
	if err != nil {
		return left, fmt.Errorf("%w: empty deploy of environment %s: %w", ErrRefused, name, err)
	}
	noop, err := model.AdmitClusterOn(r.Context(), s.node, cmd, desired)
	if err != nil {
		return left, fmt.Errorf("%w: empty deploy of environment %s: %w", ErrRefused, name, err)
	}
	if noop == nil {
		cmd.Time = time.Now().UnixNano()
		if _, err := s.node.Apply(r.Context(), cmd); err != nil {
			return left, fmt.Errorf("empty deploy of environment %s: %w", name, err)
		}
		s.log.Info("environment deployed empty for its removal", "env", name, "units", left.Units, "principal", principalOf(r).String())
	}
	return s.remains(name)
}
