// Package liveness keeps when each machine's agent was last heard and how
// many of its long polls are open: an agent waiting for work is alive,
// however long it waits. Its lock is a leaf of its own, so that an
// agent's call notes its contact, and the liveness watch reads it,
// without any other lock.
package liveness

import (
	"sync"
	"time"
)

// Contacts is each machine's agent's last contact and open long polls.
type Contacts struct {
	mu      sync.Mutex
	contact map[string]time.Time
	polling map[string]int
}

// New returns contacts with no machine heard.
func New() *Contacts {
	return &Contacts{contact: map[string]time.Time{}, polling: map[string]int{}}
}

// Heard records that machine's agent was heard at.
func (a *Contacts) Heard(machine string, at time.Time) {
	a.mu.Lock()
	a.contact[machine] = at
	a.mu.Unlock()
}

// PollStarted counts one more open long poll of machine's agent.
func (a *Contacts) PollStarted(machine string) {
	a.mu.Lock()
	a.polling[machine]++
	a.mu.Unlock()
}

// PollEnded counts one open long poll of machine's agent fewer.
func (a *Contacts) PollEnded(machine string) {
	a.mu.Lock()
	if a.polling[machine]--; a.polling[machine] <= 0 {
		delete(a.polling, machine)
	}
	a.mu.Unlock()
}

// LastHeard is when machine's agent was last heard: now while one of its
// long polls is open.
func (a *Contacts) LastHeard(machine string, now time.Time) time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.polling[machine] > 0 {
		return now
	}
	return a.contact[machine]
}
