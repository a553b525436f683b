package api

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/forward"
)

// limitBody caps the body of every request but charm uploads (streamed
// and capped by receive) and the Raft endpoints (raftstore caps its own):
// commands are bounded by model.MaxCommandBytes, as etcd bounds a request,
// so nothing larger is ever read, let alone proposed. A body that says it
// is larger is refused before a byte of it is read.
func limitBody(w http.ResponseWriter, r *http.Request) bool {
	if strings.HasPrefix(r.URL.Path, "/v1/raft/") || (r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/v1/charms/")) {
		return true
	}
	if r.ContentLength > model.MaxCommandBytes {
		writeError(w, http.StatusRequestEntityTooLarge, "request body of %d bytes is larger than the %d-byte limit of %s", r.ContentLength, model.MaxCommandBytes, r.URL.Path)
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, model.MaxCommandBytes)
	return true
}

// writeInvalid answers a command that Validate refused with err: an
// environment the FSM would refuse as the FSM's refusal is (409 with the
// problems), only sooner; anything else 400.
func writeInvalid(w http.ResponseWriter, cmd *model.Command, err error) {
	var ps model.Problems
	if errors.As(err, &ps) {
		writeStoreError(w, fmt.Errorf("%w: %w", ErrRefused, err), "")
		return
	}
	writeKind(w, forward.KindBadRequest, "%s: %v", cmd.Op, err)
}

// propose checks cmd as the FSM will (shape, sizes, names, and whether
// its request id was already used for another command) and only then
// proposes it: a malformed command answers 400, an environment the FSM
// would refuse or a reused request id 409, and neither reaches the log.
// The FSM checks again; it remains the judge.
func (s *Server) propose(w http.ResponseWriter, r *http.Request, cmd *model.Command) {
	if id := r.Header.Get("X-Request-Id"); id != "" {
		cmd.RequestID = id
	}
	if cmd.RequestID != "" {
		cmd.Digest = cmd.Fingerprint()
	}
	if err := cmd.Validate(); err != nil {
		writeInvalid(w, cmd, err)
		return
	}
	var reused error
	_ = s.node.View(func(st *model.State) error {
		_, _, reused = st.CheckRequest(cmd)
		return nil
	})
	if reused != nil {
		writeError(w, http.StatusConflict, "%v", reused)
		return
	}
	cmd.Time = time.Now().UnixNano()
	resp, err := s.node.Apply(r.Context(), cmd)
	if err != nil {
		writeStoreError(w, err, "")
		return
	}
	writeJSON(w, http.StatusOK, resp)
}
