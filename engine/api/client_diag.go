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

// DiagClient reads what happened, for diagnosis: the debug log, the
// events and the run history.
type DiagClient struct{ *conn }

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
func (c *DiagClient) DebugLog(ctx context.Context, q DebugLogQuery) (*DebugLog, error) {
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
func (c *DiagClient) Events(ctx context.Context, of string, after uint64, tail int, wait time.Duration) (*Events, error) {
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

// Logs returns the leader's recent hook runs of unit (a unit, a service, or
// "" for all) after run number after, the last limit of them (0: all kept).
// With wait > 0 it blocks until there is one or wait passes.
func (c *DiagClient) Logs(ctx context.Context, unit string, after uint64, limit int, wait time.Duration) (*Logs, error) {
	v := url.Values{}
	if unit != "" {
		v.Set("unit", unit)
	}
	v.Set("after", strconv.FormatUint(after, 10))
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	if wait > 0 {
		v.Set("wait", wait.String())
	}
	var out Logs
	_, err := c.do(ctx, http.MethodGet, c.withReveal("/v1/logs?"+v.Encode()), nil, &out)
	return &out, err
}
