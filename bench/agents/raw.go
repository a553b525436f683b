package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/fixpoint/fixpoint/bench/internal/rawhttp"
	"github.com/fixpoint/fixpoint/engine/wire"
)

// rawAgent is one simulated agent's connection to the server
// (rawhttp): its requests written in one piece to its own keep-alive
// connection and the answers read with net/http's parser, as
// bench/apibench's raw client does. Through net/http's client every
// answer went through the connection's read-loop goroutine before the
// agent's own, and the bench's goroutines stood in line on the two cores
// the server uses: its first-byte times came 3-12 ms after the server
// had written the last answer of a change (stage stamps, bench/README.md).
type rawAgent struct {
	machine string
	c       rawhttp.Conn
}

func (a *rawAgent) close() { a.c.Close() }

// claim long-polls for the agent's work and returns when the first byte
// of the answer was read (the server's wake, as this agent saw it) and
// when the kernel received it, with the answer's body, nil if the wait
// ended without work. The body is decoded by the caller
// after the stamp and the hook's wait: decoding 100 universes' answers
// on the cores the server shares delayed the next agents' reads in the
// middle of the wake being measured.
func (a *rawAgent) claim(ctx context.Context) ([]byte, wake, error) {
	status, body, first, err := a.c.Do(ctx, http.MethodGet, "/v1/agent/work?machine="+url.QueryEscape(a.machine)+"&wait=60s", nil)
	w := wake{read: first, arrived: a.c.Arrived()}
	if err != nil {
		return nil, w, err
	}
	if status != http.StatusOK {
		return nil, w, fmt.Errorf("work of %s: %d %s", a.machine, status, rawhttp.Excerpt(body))
	}
	if string(bytes.TrimSpace(body)) == "[]" {
		return nil, w, nil
	}
	return body, w, nil
}

// wake is when an agent's answer with work came: read is when the
// agent's goroutine read its first byte, arrived when the kernel put
// that byte in the agent's socket. With 1,000 agents in this one
// process on the cores the server uses, the agent may read its answer
// milliseconds after it arrived; an agent on its own machine reads it as
// it arrives.
type wake struct {
	read, arrived time.Time
}

// handedIn reads the units of a work answer.
func handedIn(machine string, body []byte) ([]handed, error) {
	var work []handed
	if err := json.Unmarshal(body, &work); err != nil {
		return nil, fmt.Errorf("work of %s: %w", machine, err)
	}
	return work, nil
}

// report sends the results of a run, as an agent does.
func (a *rawAgent) report(ctx context.Context, reps []wire.Report) error {
	body, err := json.Marshal(reps)
	if err != nil {
		return err
	}
	status, answer, _, err := a.c.Do(ctx, http.MethodPost, "/v1/agent/results?machine="+url.QueryEscape(a.machine), body)
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("results of %s: %d %s", a.machine, status, rawhttp.Excerpt(answer))
	}
	return err
}
