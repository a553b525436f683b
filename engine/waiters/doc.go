// Package waiters holds the work polls' sleep: each machine's wake-up
// signal, the polls asleep on it, and the wakes that push their looks to
// a pass. Everything is under one lock, a leaf: no other lock, and not
// the store, is taken while it is held. A wake is one call (Wake), made
// by whoever learnt what moved once its own lock is released.
package waiters
