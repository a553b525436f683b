// Package fault is the error vocabulary every hop of fixpoint speaks: the
// JSON error envelope every node answers with, the kinds of error it names
// and the sentinels those kinds turn back into, so that errors.Is works the
// same on the leader, on a follower and in an agent three hops away. Both
// sides of each hop (raftstore, engine/api, engine/agent, the controller)
// import it; it imports only model, so raftstore and engine share it
// without either importing the other.
package fault

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/fixpoint/fixpoint/model"
)

// Kind names what went wrong, independent of the words of the message. It
// travels in the envelope's "kind" and fixes the status code.
type Kind string

// The kinds of error, each with one status code (see Kind.Status).
const (
	KindBadRequest    Kind = "bad_request"    // 400: malformed or invalid request
	KindUnauthorized  Kind = "unauthorized"   // 401: no or unknown token
	KindForbidden     Kind = "forbidden"      // 403: the token does not cover it
	KindNotFound      Kind = "not_found"      // 404: no such thing
	KindNotRegistered Kind = "not_registered" // 404: the machine must register first
	KindRefused       Kind = "refused"        // 409: the model refused the command
	KindConflict      Kind = "conflict"       // 409: it clashes with the cluster's membership, or the environment moved since it was read
	KindTooLarge      Kind = "too_large"      // 413: the body is over its cap
	KindInternal      Kind = "internal"       // 500: a fault of the node
	KindBadGateway    Kind = "bad_gateway"    // 502: the node passed it on and got no answer
	KindNotLeader     Kind = "not_leader"     // 503: only the leader answers this
	KindNoLeader      Kind = "no_leader"      // 503: no leader is known or reachable
	KindUnavailable   Kind = "unavailable"    // 503: the node can not serve now
	KindTimeout       Kind = "timeout"        // 504: the deadline passed first
)

// Errors to test with errors.Is, one per kind. raftstore, engine and
// engine/api alias them, so a refusal on the leader is the same error on a follower
// and in an agent three hops away.
var (
	ErrBadRequest    = errors.New("bad request")
	ErrUnauthorized  = errors.New("unauthorized")
	ErrForbidden     = errors.New("forbidden")
	ErrNotFound      = model.ErrNotFound
	ErrNotRegistered = errors.New("not registered")
	ErrRefused       = errors.New("command refused")
	ErrConflict      = errors.New("conflict")
	ErrTooLarge      = errors.New("request too large")
	ErrInternal      = errors.New("internal error")
	ErrBadGateway    = errors.New("bad gateway")
	ErrNotLeader     = errors.New("not the leader")
	ErrNoLeader      = errors.New("no leader")
	ErrUnavailable   = errors.New("unavailable")
	ErrTimeout       = errors.New("timeout")
)

type kindInfo struct {
	status int
	err    error
}

var kinds = map[Kind]kindInfo{
	KindBadRequest:    {http.StatusBadRequest, ErrBadRequest},
	KindUnauthorized:  {http.StatusUnauthorized, ErrUnauthorized},
	KindForbidden:     {http.StatusForbidden, ErrForbidden},
	KindNotFound:      {http.StatusNotFound, ErrNotFound},
	KindNotRegistered: {http.StatusNotFound, ErrNotRegistered},
	KindRefused:       {http.StatusConflict, ErrRefused},
	KindConflict:      {http.StatusConflict, ErrConflict},
	KindTooLarge:      {http.StatusRequestEntityTooLarge, ErrTooLarge},
	KindInternal:      {http.StatusInternalServerError, ErrInternal},
	KindBadGateway:    {http.StatusBadGateway, ErrBadGateway},
	KindNotLeader:     {http.StatusServiceUnavailable, ErrNotLeader},
	KindNoLeader:      {http.StatusServiceUnavailable, ErrNoLeader},
	KindUnavailable:   {http.StatusServiceUnavailable, ErrUnavailable},
	KindTimeout:       {http.StatusGatewayTimeout, ErrTimeout},
}

// Status is the HTTP status code of k; an unknown kind is a 500.
func (k Kind) Status() int {
	if ki, ok := kinds[k]; ok {
		return ki.status
	}
	return http.StatusInternalServerError
}

// Retryable reports whether a request that failed with k may succeed when
// sent again, possibly to another node: nothing about the request itself
// was wrong.
func (k Kind) Retryable() bool {
	switch k {
	case KindInternal, KindBadGateway, KindNotLeader, KindNoLeader, KindUnavailable, KindTimeout:
		return true
	}
	return false
}

// kindOfStatus is the kind of an error answer that named none (an old node,
// a proxy, a panic handler).
func kindOfStatus(status int) Kind {
	switch status {
	case http.StatusBadRequest:
		return KindBadRequest
	case http.StatusUnauthorized:
		return KindUnauthorized
	case http.StatusForbidden:
		return KindForbidden
	case http.StatusNotFound:
		return KindNotFound
	case http.StatusConflict:
		return KindRefused
	case http.StatusRequestEntityTooLarge:
		return KindTooLarge
	case http.StatusBadGateway:
		return KindBadGateway
	case http.StatusServiceUnavailable:
		return KindUnavailable
	case http.StatusGatewayTimeout:
		return KindTimeout
	}
	if status >= 400 && status < 500 {
		return KindBadRequest
	}
	return KindInternal
}

// Error is the JSON error envelope every node answers with:
//
//	{"error": "...", "kind": "refused", "problems": [...], "leader": "...", "node": "n1"}
//
// and, decoded, an error that errors.Is its kind's Err* value and, when it
// carries problems, errors.As model.Problems.
type Error struct {
	// Status is the HTTP status it came with (or goes out with).
	Status  int    `json:"-"`
	Message string `json:"error"`
	Kind    Kind   `json:"kind"`
	// Problems are the model's findings on a refused command, with the
	// paths a CLI points at.
	Problems model.Problems `json:"problems,omitempty"`
	// Leader is the leader's HTTP address as the answering node knew it,
	// when it was not the leader itself.
	Leader string `json:"leader,omitempty"`
	// Node is the node that answered.
	Node string `json:"node,omitempty"`
}

func (e *Error) Error() string { return e.Message }

// Unwrap makes errors.Is(e, ErrRefused), errors.Is(e, model.ErrEnvMoved)
// and errors.As(e, &model.Problems) work on a decoded answer.
func (e *Error) Unwrap() []error {
	var out []error
	if ki, ok := kinds[e.Kind]; ok {
		out = append(out, ki.err)
	}
	if len(e.Problems) > 0 {
		out = append(out, e.Problems)
	}
	if e.Kind == KindConflict && strings.Contains(e.Message, model.ErrEnvMoved.Error()+": ") {
		// Of the conflicts, the one a client retries after reading the
		// environment again: the others (a server's level, membership)
		// do not pass by themselves.
		out = append(out, model.ErrEnvMoved)
	}
	return out
}

// Errorf makes an envelope of kind with a formatted message.
func Errorf(kind Kind, format string, args ...any) *Error {
	return &Error{Status: kind.Status(), Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// KindOf classifies err: the kind of an envelope inside it, else of the
// first Err* value it wraps, else fallback.
func KindOf(err error, fallback Kind) Kind {
	var e *Error
	if errors.As(err, &e) && e.Kind != "" {
		return e.Kind
	}
	// Most specific first: a refusal that also says "not found" is a
	// refusal.
	if errors.Is(err, context.DeadlineExceeded) {
		return KindTimeout
	}
	for _, k := range []Kind{KindRefused, KindNotRegistered, KindNotLeader, KindNoLeader, KindTimeout,
		KindBadRequest, KindUnauthorized, KindForbidden, KindNotFound, KindConflict, KindTooLarge,
		KindBadGateway, KindUnavailable, KindInternal} {
		if errors.Is(err, kinds[k].err) {
			return k
		}
	}
	return fallback
}

// From makes the envelope that answers err: kind as KindOf finds it, the
// message of err, and the problems, leader and node err carries. The
// prefix of a wrapping Err* value ("command refused: ") is dropped, since
// the kind says it.
func From(err error, fallback Kind) *Error {
	var moved *model.MovedError
	if errors.As(err, &moved) {
		// The client reads the environment again and retries: a
		// conflict, in the model's words whatever wrapped them.
		err = &Error{Kind: KindConflict, Message: moved.Error(), Leader: leaderOf(err), Node: nodeOf(err)}
	}
	kind := KindOf(err, fallback)
	out := &Error{Status: kind.Status(), Kind: kind, Message: err.Error()}
	var e *Error
	if errors.As(err, &e) {
		out.Leader, out.Node = e.Leader, e.Node
	}
	if ki, ok := kinds[kind]; ok {
		out.Message = strings.TrimPrefix(out.Message, ki.err.Error()+": ")
	}
	var ps model.Problems
	if errors.As(err, &ps) {
		out.Problems = ps
	}
	return out
}

// leaderOf is the leader an envelope inside err names, or "".
func leaderOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Leader
	}
	return ""
}

// nodeOf is the node an envelope inside err names, or "".
func nodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Node
	}
	return ""
}

// Write answers with e as JSON under its status (its kind's when unset).
func Write(w http.ResponseWriter, e *Error) {
	if e.Kind == "" {
		e.Kind = kindOfStatus(e.Status)
	}
	if e.Status == 0 {
		e.Status = e.Kind.Status()
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(e)
}

// maxMessage bounds the text kept of an answer that is not an envelope.
const maxMessage = 4 << 10

// Decode turns an error answer (status and body) into an *Error. A body
// that is not an envelope (a proxy's page, a panic) keeps its text,
// shortened, as the message; a kind the sender did not name, or one this
// node does not know, is read from the status.
func Decode(status int, body []byte) *Error {
	e := &Error{}
	if err := json.Unmarshal(body, e); err != nil || e.Message == "" {
		*e = Error{Message: plain(body)}
		if e.Message == "" {
			e.Message = fmt.Sprintf("%d %s", status, http.StatusText(status))
		}
	}
	e.Status = status
	if _, ok := kinds[e.Kind]; !ok || e.Kind.Status() != status {
		e.Kind = kindOfStatus(status)
	}
	return e
}

// plain is body as a one-line message of bounded length.
func plain(body []byte) string {
	body = bytes.TrimSpace(body)
	if len(body) > maxMessage {
		return strings.ToValidUTF8(string(body[:maxMessage]), "?") + "..."
	}
	return strings.ToValidUTF8(string(body), "?")
}
