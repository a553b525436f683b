package api

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/fixpoint/fixpoint/model"
)

// Register is the body of POST /v1/agent/register.
type Register struct {
	Machine string `json:"machine"`
	Address string `json:"address"`
	// Labels are the machine's labels (fixpoint agent --label), which an
	// environment's placement may ask for.
	Labels map[string]string `json:"labels,omitempty"`
}

// Registered is the answer to a registration: the agent's credential.
type Registered struct {
	Machine string `json:"machine"`
	Token   string `json:"token"`
}

// register records a machine. The join token registers a machine once and
// gets it a fresh credential; from then on only that credential renews the
// registration (the agent keeps it in its data dir), so whoever else holds
// the join token cannot take the machine, its universes and its results
// over. An agent that lost its credential needs `fixpoint machine reset`.
func (s *agentAPI) register(w http.ResponseWriter, r *http.Request) {
	var req Register
	if !decode(w, r, &req) {
		return
	}
	p := principalOf(r)
	if p.role == roleAgent && p.machine != req.Machine {
		s.log.Warn("refused request", "path", r.URL.Path, "principal", p.String(), "why", "registering another machine", "machine", model.Quote(req.Machine, 64), "remote", remote(r))
		writeError(w, http.StatusForbidden, "%s may not register machine %s: its credential covers only its own machine", p, model.Quote(req.Machine, 64))
		return
	}
	// Machines get their Juju ids, and keep their labels, once every
	// server does alike.
	recorded := s.node.ClusterLevel().Level >= model.LevelRecorded
	reg := &model.RegisterMachine{Name: req.Machine, Address: req.Address, Number: recorded}
	if recorded {
		reg.Labels = req.Labels
	} else if len(req.Labels) > 0 {
		s.log.Warn("machine registered without its labels: the cluster's feature level does not keep them yet; run fixpoint cluster upgrade once every server runs this build, then restart the agent", "machine", model.Quote(req.Machine, 64))
	}
	token := ""
	if p.role == roleAgent {
		// A renewal: the agent keeps the credential it holds.
		token = bearerToken(r)
		reg.Credential = p.credential
		reg.Renew = reg.Credential
	} else {
		token = NewToken()
		reg.Credential = HashToken(token)
	}
	cmd := &model.Command{Op: model.OpMachine, Time: time.Now().UnixNano(), Machine: reg}
	if err := cmd.Validate(); err != nil {
		writeError(w, http.StatusBadRequest, "register: %v", err)
		return
	}
	// A renewal that changes nothing is answered without an entry.
	noop, err := model.AdmitOn(r.Context(), s.node, cmd, nil)
	switch {
	case err == nil && noop == nil:
		_, err = s.node.Apply(r.Context(), cmd)
		if err != nil && !strings.Contains(err.Error(), model.ErrTakeover.Error()) {
			writeStoreError(w, err, "register machine "+req.Machine)
			return
		}
	case err != nil && !errors.Is(err, model.ErrTakeover):
		writeStoreError(w, fmt.Errorf("%w: %w", ErrRefused, err), "")
		return
	}
	if err != nil {
		// The machine holds another credential: seen before proposing,
		// or by the FSM when another registration raced this one (its
		// refusal comes back as text).
		s.refuseTakeover(w, r, p, req.Machine)
		return
	}
	// A registering agent has just started: whatever it held is gone.
	s.agents.Release(req.Machine)
	writeCompact(w, http.StatusOK, Registered{Machine: req.Machine, Token: token})
}

// refuseTakeover answers a registration of a machine that holds another
// credential, and logs it: someone holds the join token and tried to take
// the machine over, or an agent lost its credential.
func (s *agentAPI) refuseTakeover(w http.ResponseWriter, r *http.Request, p principal, machine string) {
	s.log.Warn("refused machine takeover: the machine is registered to another credential", "machine", machine, "principal", p.String(), "remote", remote(r))
	writeError(w, http.StatusConflict, "machine %s is already registered and only its current agent's credential renews it. If that agent lost its credential (%s in its data dir), run `fixpoint machine reset %s` (or `fixpoint machine forget %s` to remove the machine) and start the agent again",
		machine, model.AgentCredentialFile, machine, machine)
}

// ResetMachine is the body of POST /v1/machines/{name}/reset.
type ResetMachine struct {
	// Forget removes the machine instead of only its credential.
	Forget bool `json:"forget"`
}

func (s *changeAPI) resetMachine(w http.ResponseWriter, r *http.Request) {
	var req ResetMachine
	if r.ContentLength != 0 && !decode(w, r, &req) {
		return
	}
	propose(s.node, w, r, &model.Command{Op: model.OpReset, Reset: &model.ResetMachine{Name: r.PathValue("name"), Forget: req.Forget}})
}

// JoinToken is the body of POST /v1/token/join: the new join token's hash
// (the token itself never leaves the operator's machine), empty to revoke
// joining, and when it expires.
type JoinToken struct {
	Hash    string    `json:"hash"`
	Expires time.Time `json:"expires,omitzero"`
}

func (s *changeAPI) rotateJoin(w http.ResponseWriter, r *http.Request) {
	var req JoinToken
	if !decode(w, r, &req) {
		return
	}
	j := &model.JoinToken{Hash: req.Hash}
	if !req.Expires.IsZero() {
		j.Expires = req.Expires.UnixNano()
	}
	propose(s.node, w, r, &model.Command{Op: model.OpJoin, Join: j})
}

// bearerToken is the token a request presents.
func bearerToken(r *http.Request) string {
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

// remote names where a request came from: the peer, and whom a forwarding
// node says it forwarded for.
func remote(r *http.Request) string {
	if f := r.Header.Get("X-Forwarded-For"); f != "" {
		return r.RemoteAddr + " for " + model.Quote(f, 64)
	}
	return r.RemoteAddr
}
