package api

import (
	"encoding/json"

	"github.com/fixpoint/fixpoint/engine/unijson"
	"github.com/fixpoint/fixpoint/engine/wire"
)

// appendWork appends w as encoding/json writes it (same bytes: fields in
// order, omitempty, sorted map keys, HTML-safe string escapes), without
// reflection (unijson). A universe the controller encoded as it built it
// (w.UniverseJSON) goes out as it is. TestAppendWorkIsEncodingJSON pins
// the equality, field by field.
func appendWork(b []byte, w *wire.Work) ([]byte, error) {
	b = append(b, `{"unit":`...)
	b = unijson.AppendString(b, w.Unit)
	b = append(b, `,"hash":`...)
	b = unijson.AppendString(b, w.Hash)
	b = append(b, `,"charm":`...)
	b = unijson.AppendString(b, w.Charm)
	if w.Legacy {
		b = append(b, `,"legacy":true`...)
	}
	b = append(b, `,"universe":`...)
	if w.UniverseJSON != nil {
		b = append(b, w.UniverseJSON...)
	} else {
		var err error
		if b, err = unijson.Append(b, w.Universe, nil); err != nil {
			return b, err
		}
	}
	if w.Environment != "" {
		b = append(b, `,"environment":`...)
		b = unijson.AppendString(b, w.Environment)
	}
	if w.Principal != "" {
		b = append(b, `,"principal":`...)
		b = unijson.AppendString(b, w.Principal)
	}
	if w.Status != nil {
		b = append(b, `,"status":{"state":`...)
		b = unijson.AppendString(b, w.Status.State)
		if w.Status.Message != "" {
			b = append(b, `,"message":`...)
			b = unijson.AppendString(b, w.Status.Message)
		}
		b = append(b, '}')
	}
	if len(w.Ports) > 0 {
		b = append(b, `,"ports":`...)
		b = append(b, '[')
		for i, p := range w.Ports {
			if i > 0 {
				b = append(b, ',')
			}
			b = unijson.AppendString(b, p)
		}
		b = append(b, ']')
	}
	if w.Action != nil {
		// Rare, and small: the standard encoder.
		a, err := json.Marshal(w.Action)
		if err != nil {
			return b, err
		}
		b = append(b, `,"action":`...)
		b = append(b, a...)
	}
	if w.Env != "" {
		b = append(b, `,"env":`...)
		b = unijson.AppendString(b, w.Env)
	}
	if w.EnvUUID != "" {
		b = append(b, `,"env_uuid":`...)
		b = unijson.AppendString(b, w.EnvUUID)
	}
	return append(b, '}'), nil
}
