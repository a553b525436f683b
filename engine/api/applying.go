package api

import (
	"sync"

	"github.com/fixpoint/fixpoint/engine"
)

// applying is set while a starting `up` has not applied the environment
// it was given: the state may look converged (nothing to do yet, or the
// previous run's environment), and must not say so.
type applying struct {
	mu   sync.Mutex
	on   bool
	done chan struct{} // closed when on is cleared
}

// SetApplying marks the node as applying its starting environment, or
// (false) done with it; long polls of status wake when it is cleared.
func (s *Server) SetApplying(on bool) {
	s.applying.mu.Lock()
	moved := true
	switch {
	case on && !s.applying.on:
		s.applying.on, s.applying.done = true, make(chan struct{})
	case !on && s.applying.on:
		s.applying.on = false
		close(s.applying.done)
	default:
		moved = false
	}
	s.applying.mu.Unlock()
	if moved && s.ctl != nil {
		// After the flag: a status that read the old flag read the old
		// generation too, and its long poll wakes.
		s.ctl.NoteChange()
	}
}

// applyingDone returns a channel closed when applying is cleared, or nil
// when it is not set.
func (s *Server) applyingDone() <-chan struct{} {
	s.applying.mu.Lock()
	defer s.applying.mu.Unlock()
	if !s.applying.on {
		return nil
	}
	return s.applying.done
}

// markApplying makes st say "applying environment" while it is.
func (s *Server) markApplying(st *engine.Status) {
	if s.applyingDone() == nil {
		return
	}
	st.SetApplying()
}
