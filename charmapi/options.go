package charmapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Options is a typed view of a unit's config. The control plane has
// already checked every value against the charm's declared option types
// and filled in the declared defaults, so a well-formed charm rarely sees
// an error here; the default passed to each getter is what a missing
// option (say, in a hand-written test universe) reads as.
//
// Getters never fail: a value of the wrong type reads as the default and
// is remembered, and Err returns every such problem at once, so a hook
// reads all its options and checks once:
//
//	opts := u.Options()
//	port := opts.Int("port", 8080)
//	name := opts.String("database", "shop")
//	if err := opts.Err(); err != nil {
//		return nil, err
//	}
type Options struct {
	cfg  map[string]any
	errs []error
}

// Options returns a typed view of u.Config.
func (u *Universe) Options() *Options { return &Options{cfg: u.Config} }

// Has reports whether the option is set (to anything but null).
func (o *Options) Has(name string) bool {
	v, ok := o.cfg[name]
	return ok && v != nil
}

// String returns a string option, or def when it is not set.
func (o *Options) String(name, def string) string {
	v, ok := o.cfg[name]
	if !ok || v == nil {
		return def
	}
	if s, ok := v.(string); ok {
		return s
	}
	o.bad(name, v, "a string")
	return def
}

// Int returns an int option, or def when it is not set. Integral numbers
// of any Go numeric type, json.Number and numeric strings are accepted.
func (o *Options) Int(name string, def int) int {
	v, ok := o.cfg[name]
	if !ok || v == nil {
		return def
	}
	switch n := v.(type) {
	case int:
		return n
	case int64:
		return int(n)
	case int32:
		return int(n)
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int(n)
		}
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return int(i)
		}
	case string:
		if i, err := strconv.Atoi(n); err == nil {
			return i
		}
	}
	o.bad(name, v, "an int")
	return def
}

// Float returns a float option, or def when it is not set.
func (o *Options) Float(name string, def float64) float64 {
	v, ok := o.cfg[name]
	if !ok || v == nil {
		return def
	}
	switch n := v.(type) {
	case float64:
		return n
	case float32:
		return float64(n)
	case int:
		return float64(n)
	case int64:
		return float64(n)
	case json.Number:
		if f, err := n.Float64(); err == nil {
			return f
		}
	case string:
		if f, err := strconv.ParseFloat(n, 64); err == nil {
			return f
		}
	}
	o.bad(name, v, "a float")
	return def
}

// Bool returns a boolean option, or def when it is not set. Besides JSON
// booleans, the strings "true" and "false" are accepted.
func (o *Options) Bool(name string, def bool) bool {
	v, ok := o.cfg[name]
	if !ok || v == nil {
		return def
	}
	switch b := v.(type) {
	case bool:
		return b
	case string:
		if p, err := strconv.ParseBool(b); err == nil {
			return p
		}
	}
	o.bad(name, v, "a boolean")
	return def
}

// Err returns every option that had the wrong type, or nil.
func (o *Options) Err() error { return errors.Join(o.errs...) }

func (o *Options) bad(name string, v any, want string) {
	o.errs = append(o.errs, fmt.Errorf("config option %q is %v (%T); want %s", name, v, v, want))
}
