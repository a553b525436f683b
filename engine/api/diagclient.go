package api

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/fixpoint/fixpoint/model"
)

// DebugLogQuery is what a debug-log read asks for.
type DebugLogQuery struct {
	Filter model.LogFilter
	// After reads the lines after this number; Tail, when set, the last
	// Tail lines instead.
	After uint64
	Tail  int
	// Wait blocks until a line after After arrives, or it passes.
	Wait time.Duration
}

// DebugLog reads the debug log (operator).
func (c *Client) DebugLog(ctx context.Context, q DebugLogQuery) (*DebugLog, error) {
	v := url.Values{}
	if len(q.Filter.Include) > 0 {
		v.Set("include", strings.Join(q.Filter.Include, ","))
	}
	if len(q.Filter.Exclude) > 0 {
		v.Set("exclude", strings.Join(q.Filter.Exclude, ","))
	}
	if q.Filter.Level != "" {
		v.Set("level", q.Filter.Level)
	}
	readValues(v, q.After, q.Tail, q.Wait)
	var out DebugLog
	_, err := c.do(ctx, http.MethodGet, "/v1/debug-log?"+v.Encode(), nil, &out)
	return &out, err
}

// Events reads the unit events of of (a unit, a service, or "" for all).
func (c *Client) Events(ctx context.Context, of string, after uint64, tail int, wait time.Duration) (*Events, error) {
	v := url.Values{}
	if of != "" {
		v.Set("of", of)
	}
	readValues(v, after, tail, wait)
	var out Events
	_, err := c.do(ctx, http.MethodGet, c.withReveal("/v1/events?"+v.Encode()), nil, &out)
	return &out, err
}

func readValues(v url.Values, after uint64, tail int, wait time.Duration) {
	if after > 0 {
		v.Set("after", strconv.FormatUint(after, 10))
	}
	if tail > 0 {
		v.Set("tail", strconv.Itoa(tail))
	}
	if wait > 0 {
		v.Set("wait", wait.String())
	}
}

// ShipLogs posts a batch of the machine's log lines (agent).
func (c *Client) ShipLogs(ctx context.Context, machine string, lines []model.LogLine) error {
	return c.postJSON(ctx, "/v1/agent/logs?machine="+url.QueryEscape(machine), model.LogBatch{Lines: lines}, nil)
}
