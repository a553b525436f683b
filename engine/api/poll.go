package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// A work poll is answered by its wait: with work as soon as there is
// some, empty when the wait runs out. An answer later than that was
// held on the way (a relay, a proxy, a connection shared with another
// request), and the agent idles meanwhile while its work waits.

// defaultPollWait is a work poll's wait when it names none.
const defaultPollWait = 30 * time.Second

// maxPollWait bounds the wait a poll may ask for.
const maxPollWait = 5 * time.Minute

// ErrPollTimeout is a work poll left without an answer past its wait and
// pollGrace: its answer is held on the way.
var ErrPollTimeout = errors.New("no answer to the work poll by its wait and grace")

// pollWait is the wait a work poll asks for.
func pollWait(q url.Values) (time.Duration, error) {
	ws := q.Get("wait")
	if ws == "" {
		return defaultPollWait, nil
	}
	d, err := time.ParseDuration(ws)
	if err != nil {
		return 0, fmt.Errorf("wait=%q is not a duration", ws)
	}
	return min(d, maxPollWait), nil
}

// pollGrace is how long past its wait a poll's answer may take: a relay
// through a follower, a burst of entries landing before the hand-out.
// The agent gives up after all of it; a follower relaying the poll
// after half, so that it is the one to say so.
func pollGrace(wait time.Duration) time.Duration {
	return wait/2 + time.Second
}

// relayPoll passes a work poll on to the leader, and warns when the
// leader's answer does not come by the poll's wait and half its grace:
// the agent's work waits behind whatever holds it.
func (s *agentAPI) relayPoll(w http.ResponseWriter, r *http.Request, leader string) {
	wait, err := pollWait(r.URL.Query())
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), wait+pollGrace(wait)/2)
	defer cancel()
	start := time.Now()
	s.proxy.Serve(w, r.WithContext(ctx), leader)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && r.Context().Err() == nil {
		s.log.Warn("a relayed work poll ended by timeout: the leader's answer, due by the poll's wait, did not come",
			"machine", r.URL.Query().Get("machine"), "leader", leader, "wait", wait, "after", time.Since(start).Round(time.Millisecond))
	}
}
