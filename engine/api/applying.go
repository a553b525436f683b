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
	if s.applying.set(on) && s.ctl != nil {
		// After the flag: a status that read the old flag read the old
		// generation too, and its long poll wakes.
		s.ctl.NoteChange()
	}
}

// set sets or clears the flag and says whether it moved.
func (a *applying) set(on bool) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case on && !a.on:
		a.on, a.done = true, make(chan struct{})
	case !on && a.on:
		a.on = false
		close(a.done)
	default:
		return false
	}
	return true
}

// doneCh returns a channel closed when applying is cleared, or nil when
// it is not set.
func (a *applying) doneCh() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.on {
		return nil
	}
	return a.done
}

// mark makes st say "applying environment" while it is.
func (a *applying) mark(st *engine.Status) {
	if a.doneCh() == nil {
		return
	}
	st.SetApplying()
}
