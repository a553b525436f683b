package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/fixpoint/fixpoint/model"
)

// The writers deploy the environment with a new value, each value once,
// through a random server, and retry a write whose fate they did not
// learn with the same request id until the control plane answers: the
// request id makes a repeat change nothing, so a write is acknowledged
// once and its interval runs from its first send to that answer. Readers
// read one service's config, linearizably, from a random server. The
// value is one register: every write sets it in every service.

// regIn is an operation's input: a write of V, or a read of Service.
type regIn struct {
	Write   bool
	V       int
	Service string
}

// regOut is its output: the value read, or a write never answered.
type regOut struct {
	V       int
	Unknown bool
}

// registerModel is one register, initially initialValue.
var registerModel = porcupine.Model{
	Init: func() any { return initialValue },
	Step: func(state, input, output any) (bool, any) {
		in, out := input.(regIn), output.(regOut)
		if in.Write {
			return true, in.V
		}
		return out.V == state.(int), state
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(regIn), output.(regOut)
		switch {
		case in.Write && out.Unknown:
			return fmt.Sprintf("put(%d) -> ?", in.V)
		case in.Write:
			return fmt.Sprintf("put(%d)", in.V)
		}
		return fmt.Sprintf("get(%s) -> %d", in.Service, out.V)
	},
	DescribeState: func(state any) string { return fmt.Sprint(state) },
}

// ack is one acknowledged write.
type ack struct {
	V     int
	ID    string
	Index uint64
}

// history is the operations of every writer and reader.
type history struct {
	t0   time.Time
	next atomic.Int64 // the last value given out

	mu      sync.Mutex
	ops     []porcupine.Operation
	acked   []ack
	refused int
	unknown int
	retries int
	reads   int
	failed  int // reads that got no answer
}

func newHistory() *history {
	h := &history{t0: time.Now()}
	h.next.Store(initialValue)
	return h
}

func (h *history) now() int64 { return int64(time.Since(h.t0)) }

func (h *history) add(op porcupine.Operation) {
	h.mu.Lock()
	h.ops = append(h.ops, op)
	h.mu.Unlock()
}

// write runs one writer: new writes until issue ends, then it finishes
// the write it has going, giving up (unknown) only when hard ends.
func (h *history) write(issue, hard context.Context, c *cluster, e *environment, id int, pause time.Duration) {
	rng := rand.New(rand.NewPCG(uint64(id), uint64(time.Now().UnixNano())))
	for issue.Err() == nil {
		v := int(h.next.Add(1))
		body, err := e.deploy(v)
		if err != nil {
			panic(err) // plain data: a bug
		}
		rid := fmt.Sprintf("chaos-%d", v)
		call := h.now()
		var resp model.Response
		outcome := "unknown"
		for tries := 0; hard.Err() == nil; tries++ {
			if tries > 0 {
				h.mu.Lock()
				h.retries++
				h.mu.Unlock()
				_ = sleep(hard, 200*time.Millisecond)
			}
			ctx, cancel := context.WithTimeout(hard, 15*time.Second)
			_, err := c.call(ctx, rng.IntN(len(c.servers)), http.MethodPost, "/v1/deploy", map[string]string{"X-Request-Id": rid}, body, &resp)
			cancel()
			var he *httpError
			if err == nil {
				outcome = "acked"
				break
			}
			if errors.As(err, &he) && he.code/100 == 4 && he.code != http.StatusRequestTimeout && he.code != http.StatusTooManyRequests {
				// Refused before it was proposed, or by the state
				// machine: nothing changed.
				outcome = "refused: " + he.Error()
				break
			}
		}
		ret := h.now()
		h.mu.Lock()
		switch outcome {
		case "acked":
			h.ops = append(h.ops, porcupine.Operation{ClientId: id, Input: regIn{Write: true, V: v}, Call: call, Output: regOut{}, Return: ret})
			h.acked = append(h.acked, ack{V: v, ID: rid, Index: resp.Index})
		case "unknown":
			// Never answered: it may happen at any time after its call.
			h.ops = append(h.ops, porcupine.Operation{ClientId: id, Input: regIn{Write: true, V: v}, Call: call, Output: regOut{Unknown: true}, Return: math.MaxInt64})
			h.unknown++
		default:
			h.refused++
			fmt.Fprintf(os.Stderr, "chaos: write %d %s\n", v, outcome)
		}
		h.mu.Unlock()
		_ = sleep(issue, pause)
	}
}

// read runs one reader until issue ends.
func (h *history) read(issue context.Context, c *cluster, id int, pause time.Duration) {
	rng := rand.New(rand.NewPCG(uint64(id), uint64(time.Now().UnixNano())))
	svcs := services()
	for issue.Err() == nil {
		svc := svcs[rng.IntN(len(svcs))]
		call := h.now()
		v, err := readValue(issue, c, rng.IntN(len(c.servers)), svc, 5*time.Second)
		ret := h.now()
		h.mu.Lock()
		if err == nil {
			h.ops = append(h.ops, porcupine.Operation{ClientId: id, Input: regIn{Service: svc}, Call: call, Output: regOut{V: v}, Return: ret})
			h.reads++
		} else {
			h.failed++
		}
		h.mu.Unlock()
		_ = sleep(issue, pause)
	}
}

// readValue reads svc's value from server i, linearizably.
func readValue(ctx context.Context, c *cluster, i int, svc string, within time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	var sc struct {
		Config map[string]struct {
			Value any `json:"value"`
		} `json:"config"`
	}
	if _, err := c.call(ctx, i, http.MethodGet, "/v1/services/"+svc+"/config", nil, nil, &sc); err != nil {
		return 0, err
	}
	f, ok := sc.Config[configKey[svc]].Value.(float64)
	if !ok || f != math.Trunc(f) {
		return 0, fmt.Errorf("%s's %s is %v, not a whole number", svc, configKey[svc], sc.Config[configKey[svc]].Value)
	}
	return int(f), nil
}

// linearizable checks the history with porcupine, within limit. It
// writes porcupine's visualisation of a failure to file.
func (h *history) linearizable(limit time.Duration, file string) (porcupine.CheckResult, error) {
	h.mu.Lock()
	ops := append([]porcupine.Operation(nil), h.ops...)
	h.mu.Unlock()
	res, info := porcupine.CheckOperationsVerbose(registerModel, ops, limit)
	if res != porcupine.Illegal {
		return res, nil
	}
	f, err := os.Create(file)
	if err != nil {
		return res, err
	}
	defer f.Close()
	return res, porcupine.Visualize(registerModel, info, f)
}

// last is the acknowledged write with the highest index.
func (h *history) last() (ack, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var best ack
	for _, a := range h.acked {
		if a.Index > best.Index {
			best = a
		}
	}
	return best, len(h.acked) > 0
}
