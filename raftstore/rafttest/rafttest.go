// Package rafttest is the waiting every test of the module shares, from a
// three-node cluster's to one controller's: poll a condition until it
// holds, with a deadline that only bounds a failure. A test never sleeps
// to synchronise; it waits here for what it needs to see.
package rafttest

import (
	"testing"
	"time"
)

// poll is how often a condition is checked again.
const poll = 5 * time.Millisecond

// Eventually checks cond until it returns nil and fails t, with what and
// cond's last error, if within passes first.
func Eventually(t testing.TB, within time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %v", what, within, err)
		}
		time.Sleep(poll)
	}
}

// Until checks cond until it holds and fails t, with what, if within
// passes first.
func Until(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(poll)
	}
}
