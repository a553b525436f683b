package raftstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/hashicorp/raft"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/model/fault"
	"github.com/fixpoint/fixpoint/raftstore/forward"
)

// maxBody bounds request bodies other than backups.
const maxBody = 64 << 20

// Handler serves the node-to-node and operator endpoints under /v1/raft/:
//
//	POST /v1/raft/apply      model.Command → model.Response (forwarded writes)
//	GET  /v1/raft/readindex  {"index": N}, leader only
//	POST /v1/raft/join       {id, raft_addr, http_addr}
//	GET  /v1/raft/members    []Member
//	GET  /v1/raft/status     this node about itself
//	POST /v1/raft/remove     {id}
//	POST /v1/raft/snapshot   take a snapshot on this node
//	GET  /v1/raft/backup     a backup document
//	POST /v1/raft/restore    restore a backup document into the cluster
//	GET  /v1/raft/level      model.ClusterLevel: the servers' builds
//	POST /v1/raft/upgrade    raise the cluster's feature level
//
// Errors are forward's JSON envelope, one status per kind: 503 not_leader
// or no_leader, 409 refused for a command the model refused, and so on.
// Requests from a client are forwarded to the leader; requests from
// another node (forward.Header) are answered here or refused, never
// forwarded again. Authentication is the caller's: wrap this handler.
func (s *Store) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/raft/apply", s.handleApply)
	mux.HandleFunc("GET /v1/raft/readindex", s.handleReadIndex)
	mux.HandleFunc("POST /v1/raft/join", s.handleJoin)
	mux.HandleFunc("GET /v1/raft/members", s.handleMembers)
	mux.HandleFunc("GET /v1/raft/status", s.handleStatus)
	mux.HandleFunc("POST /v1/raft/remove", s.handleRemove)
	mux.HandleFunc("POST /v1/raft/snapshot", s.handleSnapshot)
	mux.HandleFunc("GET /v1/raft/backup", s.handleBackup)
	mux.HandleFunc("POST /v1/raft/restore", s.handleRestore)
	mux.HandleFunc("GET /v1/raft/level", s.handleLevel)
	mux.HandleFunc("POST /v1/raft/upgrade", s.handleUpgrade)
	mux.HandleFunc("/v1/raft/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &notFound{fmt.Sprintf("no endpoint %s %s", r.Method, r.URL.Path)})
	})
	return mux
}

// forwarded reports whether another node sent r on a caller's behalf.
func forwarded(r *http.Request) bool { return forward.Forwarded(r) }

// notLeader is the answer of a follower to a request that only the leader
// may answer.
func (s *Store) notLeader() *fault.Error {
	id, addr := s.leader()
	e := fault.Errorf(fault.KindNotLeader, "node %s is not the leader and knows no leader", s.cfg.NodeID)
	if id != "" {
		e.Message = fmt.Sprintf("node %s is not the leader (the leader is %s at %s)", s.cfg.NodeID, id, addr)
	}
	e.Leader, e.Node = addr, s.cfg.NodeID
	return e
}

func (s *Store) handleApply(w http.ResponseWriter, r *http.Request) {
	var cmd model.Command
	if err := decodeBody(r, &cmd); err != nil {
		writeError(w, err)
		return
	}
	if !forwarded(r) {
		if noop, err := s.admitCommand(r.Context(), &cmd); err != nil || noop != nil {
			if err != nil {
				writeError(w, err)
			} else {
				writeJSON(w, http.StatusOK, noop)
			}
			return
		}
		resp, err := s.Apply(r.Context(), &cmd)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, resp)
		return
	}
	if !s.IsLeader() {
		writeError(w, s.notLeader())
		return
	}
	bindRequest(&cmd)
	data, need, err := proposal(&cmd)
	if err != nil {
		writeError(w, err)
		return
	}
	if err := s.gate(r.Context(), need); err != nil {
		writeError(w, err)
		return
	}
	out, err := s.propose(r.Context(), &cmd, data)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Store) handleReadIndex(w http.ResponseWriter, r *http.Request) {
	if !s.IsLeader() {
		writeError(w, s.notLeader())
		return
	}
	idx, err := s.readIndex(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, readIndexAnswer{Index: idx})
}

func (s *Store) handleJoin(w http.ResponseWriter, r *http.Request) {
	var req joinRequest
	if err := decodeBody(r, &req); err != nil {
		writeError(w, err)
		return
	}
	if s.IsLeader() {
		ans, err := s.addMember(r.Context(), req)
		if err != nil {
			s.log.Warn("join refused", "id", req.ID, "raft_addr", req.RaftAddr, "error", err)
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, ans)
		return
	}
	// The joining node retries on its own; forward once, to the leader.
	_, addr := s.leader()
	if forwarded(r) || addr == "" {
		writeError(w, s.notLeader())
		return
	}
	body, _ := json.Marshal(req)
	var out joinAnswer
	if err := s.fwd.Forward(r.Context(), "POST", addr, "/v1/raft/join", body, &out); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Store) handleMembers(w http.ResponseWriter, r *http.Request) {
	ms, err := s.Members(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, ms)
}

func (s *Store) handleStatus(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.status())
}

func (s *Store) handleRemove(w http.ResponseWriter, r *http.Request) {
	var req removeRequest
	if err := decodeBody(r, &req); err != nil {
		writeError(w, err)
		return
	}
	var err error
	switch {
	case s.IsLeader():
		err = s.removeMember(r.Context(), req.ID)
	case forwarded(r):
		err = s.notLeader()
	default:
		err = s.Remove(r.Context(), req.ID)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"removed": req.ID})
}

func (s *Store) handleLevel(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.ClusterLevel())
}

func (s *Store) handleUpgrade(w http.ResponseWriter, r *http.Request) {
	var req upgradeRequest
	if err := decodeBody(r, &req); err != nil {
		writeError(w, err)
		return
	}
	var lvl model.Level
	var err error
	switch {
	case s.IsLeader():
		lvl, err = s.raiseLevel(r.Context())
	case forwarded(r):
		err = s.notLeader()
	default:
		lvl, err = s.Upgrade(r.Context())
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, upgradeAnswer{Level: lvl})
}

func (s *Store) handleSnapshot(w http.ResponseWriter, r *http.Request) {
	if err := s.Snapshot(r.Context()); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"node": s.cfg.NodeID, "index": s.Index()})
}

func (s *Store) handleBackup(w http.ResponseWriter, r *http.Request) {
	// Buffered, so that a failure is still an error answer.
	var buf bytes.Buffer
	if err := s.SaveBackup(r.Context(), &buf); err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", `attachment; filename="fixpoint-backup.json"`)
	_, _ = w.Write(buf.Bytes())
}

func (s *Store) handleRestore(w http.ResponseWriter, r *http.Request) {
	if forwarded(r) && !s.IsLeader() {
		writeError(w, s.notLeader())
		return
	}
	if err := s.RestoreBackup(r.Context(), http.MaxBytesReader(w, r.Body, maxBackup)); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"index": s.Index()})
}

// decodeBody decodes a JSON request body.
func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBody))
	if err := dec.Decode(v); err != nil {
		return &badRequest{fmt.Sprintf("decode request body: %v", err)}
	}
	return nil
}

// writeJSON writes v as a JSON answer.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers with err as forward's envelope, its kind found from
// raftstore's and raft's errors first, then from the forward kinds err
// wraps (an answer relayed from another node keeps its kind).
func writeError(w http.ResponseWriter, err error) {
	fault.Write(w, fault.From(err, kindOf(err)))
}

// kindOf is the kind of the errors of this package and of raft; the rest
// is left to fault.KindOf.
func kindOf(err error) fault.Kind {
	var bad *badRequest
	var nf *notFound
	var conflict *conflictError
	var lvl *levelError
	var halt *haltError
	switch {
	case errors.Is(err, ErrRefused):
		return fault.KindRefused
	case errors.As(err, &bad):
		return fault.KindBadRequest
	case errors.As(err, &nf):
		return fault.KindNotFound
	case errors.As(err, &conflict), errors.As(err, &lvl), errors.Is(err, errNotMember):
		return fault.KindConflict
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrNotVoter):
		return fault.KindNotLeader
	case errors.Is(err, context.DeadlineExceeded):
		return fault.KindTimeout
	case errors.As(err, &halt), errors.Is(err, ErrClosed), errors.Is(err, raft.ErrRaftShutdown),
		errors.Is(err, context.Canceled), errors.Is(err, raft.ErrLeadershipLost),
		errors.Is(err, raft.ErrLeadershipTransferInProgress), errors.Is(err, raft.ErrEnqueueTimeout),
		errors.Is(err, raft.ErrAbortedByRestore):
		return fault.KindUnavailable
	}
	return fault.KindOf(err, fault.KindInternal)
}
