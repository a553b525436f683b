package api

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/model/fault"
)

// Error is an error a control-plane node answered with: the one envelope
// of package forward, which errors.Is the Err* value of its kind.
type Error = fault.Error

// Errors to test an answer with errors.Is. They are forward's (and
// raftstore's) values, so a refusal reads the same on every hop.
var (
	ErrBadRequest    = fault.ErrBadRequest
	ErrUnauthorized  = fault.ErrUnauthorized
	ErrForbidden     = fault.ErrForbidden
	ErrNotFound      = fault.ErrNotFound
	ErrNotRegistered = fault.ErrNotRegistered
	ErrRefused       = fault.ErrRefused
	// ErrConflict is a clash (409 conflict): among them ErrEnvMoved.
	ErrConflict = fault.ErrConflict
	// ErrEnvMoved is a deploy planned against a revision of the
	// environment it is no longer at: read it again and retry. Other
	// conflicts do not pass by retrying.
	ErrEnvMoved    = model.ErrEnvMoved
	ErrTooLarge    = fault.ErrTooLarge
	ErrNotLeader   = fault.ErrNotLeader
	ErrNoLeader    = fault.ErrNoLeader
	ErrUnavailable = fault.ErrUnavailable
	ErrTimeout     = fault.ErrTimeout
)

// writeError answers with an envelope of the kind that code stands for.
func writeError(w http.ResponseWriter, code int, format string, args ...any) {
	fault.Write(w, &fault.Error{Status: code, Message: fmt.Sprintf(format, args...)})
}

// writeKind answers with an envelope of kind.
func writeKind(w http.ResponseWriter, kind fault.Kind, format string, args ...any) {
	fault.Write(w, fault.Errorf(kind, format, args...))
}

// writeStoreError answers for a store or controller call that failed: a
// refusal is the caller's (409, with the model's problems), a deadline a
// 504, anything else the control plane's (503). what says which call.
func writeStoreError(w http.ResponseWriter, err error, what string) {
	e := fault.From(err, fault.KindUnavailable)
	if what != "" {
		e.Message = what + ": " + e.Message
	}
	fault.Write(w, e)
}

// requestError answers for a request body that could not be read: too
// large, or not the JSON expected.
func requestError(w http.ResponseWriter, err error) {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		writeKind(w, fault.KindTooLarge, "request body is larger than the %d-byte cap", tooLarge.Limit)
		return
	}
	writeKind(w, fault.KindBadRequest, "request body: %v", err)
}
