package legacy

import (
	"context"
	"slices"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/charmapi"
)

// session is the hook context of one Run: what the run reads, what its
// hooks wrote, and which hook is running. Tool calls arrive concurrently
// (a hook may background them), so everything is behind mu. A tool whose
// concern is one part (inputs, hookWrites, secretWork, actionContext) is
// that part's method; the tools that span parts take the session.
type session struct {
	mu  sync.Mutex
	log hclog.Logger

	in     inputs     // what the run reads: fixed when it begins
	writes hookWrites // what the hooks wrote, for the result

	// members is the unit's view of each relation's membership (see
	// initialMembers): the remote units whose joined hook has been
	// committed and whose departed hook has not.
	members map[string]map[string]bool

	cur *hookContext // the hook running now; nil between hooks
	// gen counts the calls of tools that write (Response.Gen): a caller
	// that kept an answer from an older generation asks again, whichever
	// process of the hook wrote.
	gen uint64

	// action is the running action (RunAction); nil in hooks, where the
	// action tools fail.
	action *actionContext
	// sec is the call's secrets once a secret tool ran (tools_secret.go).
	sec *secretWork
}

// hookContext is one hook run, as its tools see it.
type hookContext struct {
	id    string
	event charmapi.Event
}

// newSession starts a Run's session over a copy of u (newInputs), the
// unit's current status and its open ports.
func newSession(u *charmapi.Universe, status *charmapi.Status, ports []string, log hclog.Logger) (*session, error) {
	in, err := newInputs(u)
	if err != nil {
		return nil, err
	}
	w, err := newHookWrites(in.u.State, status, ports)
	if err != nil {
		return nil, err
	}
	return &session{
		log:     log,
		in:      in,
		writes:  w,
		members: initialMembers(in.rels, in.u.Events),
	}, nil
}

// begin makes ev the running hook; tool calls must name id.
func (s *session) begin(id string, ev charmapi.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur = &hookContext{id: id, event: ev}
}

// end closes the running hook's context: its stragglers are refused.
func (s *session) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur = nil
}

// killWith makes cancel what juju-reboot --now calls to kill the hook
// about to run; nil clears it.
func (s *session) killWith(cancel context.CancelFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes.boot.kill = cancel
}

// rebootingNow reports whether juju-reboot --now ran: the Run stops.
func (s *session) rebootingNow() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes.boot.now
}

// result is what the run's hooks wrote (hookWrites.result) with the
// secrets' changes.
func (s *session) result() *charmapi.Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	res := s.writes.result()
	if s.sec != nil && len(s.sec.changes) > 0 {
		res.Secrets = slices.Clone(s.sec.changes)
	}
	return res
}
