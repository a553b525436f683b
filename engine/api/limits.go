package api

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/model/fault"
)

// limitBody caps the body of every request but charm and resource
// uploads (streamed and capped by receive) and the Raft endpoints (raftstore caps its own):
// commands are bounded by model.MaxCommandBytes, as etcd bounds a request,
// so nothing larger is ever read, let alone proposed. A body that says it
// is larger is refused before a byte of it is read.
func limitBody(w http.ResponseWriter, r *http.Request) bool {
	path := unprefixedPath(r.URL.Path)
	if strings.HasPrefix(path, "/v1/raft/") || (r.Method == http.MethodPut && (strings.HasPrefix(path, "/v1/charms/") || strings.HasPrefix(path, "/v1/resources/"))) {
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
	writeKind(w, fault.KindBadRequest, "%s: %v", cmd.Op, err)
}

// propose checks cmd, on node, as the FSM will (shape, sizes, names, limits, and
// whatever else the state it reads decides: whether its request id was
// used for another command, whether the unit to resolve is in error) and
// only then proposes it: a malformed command answers 400, one the FSM
// would refuse 409, one that would change nothing 200 with the index it
// was judged at, and none of them reaches the log. The FSM checks again;
// it remains the judge.
func propose(node Node, w http.ResponseWriter, r *http.Request, cmd *model.Command) {
	if id := r.Header.Get("X-Request-Id"); id != "" {
		cmd.RequestID = id
	}
	// A command sent to an environment's routes names it before its
	// digest is taken, so that a retry through the same routes matches.
	if e, ok := node.(envNode); ok {
		if err := stampEnv(cmd, e.env); err != nil {
			writeStoreError(w, err, "")
			return
		}
	}
	if cmd.RequestID != "" {
		cmd.Digest = cmd.Fingerprint()
	}
	desired, err := cmd.Check()
	if err != nil {
		writeInvalid(w, cmd, err)
		return
	}
	// Judged by the cluster, as the FSM applies it: an environment's
	// share and the cluster's totals over every environment hold.
	noop, err := model.AdmitClusterOn(r.Context(), node, cmd, desired)
	switch {
	case errors.Is(err, model.ErrRequestReused):
		writeError(w, http.StatusConflict, "%v", err)
		return
	case err != nil:
		writeStoreError(w, fmt.Errorf("%w: %w", ErrRefused, err), "")
		return
	case noop != nil:
		writeJSON(w, http.StatusOK, noop)
		return
	}
	cmd.Time = time.Now().UnixNano()
	resp, err := node.Apply(r.Context(), cmd)
	if err != nil {
		writeStoreError(w, err, "")
		return
	}
	writeJSON(w, http.StatusOK, resp)
}
