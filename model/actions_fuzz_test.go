package model

import (
	"encoding/json"
	"testing"
)

// FuzzActionParams checks params as an operator sends them against a
// declaration: any JSON never panics, and what is accepted is within
// the bounds and accepted again unchanged (the FSM checks the params
// the API already defaulted).
func FuzzActionParams(f *testing.F) {
	for _, s := range []string{`{}`, `{"dest":"/srv"}`, `{"dest":"x","level":0}`, `{"dest":"x","opts":{"fast":1}}`, `{"dest":[1,{"a":null}]}`, `{"dest":"x","level":2.5}`} {
		f.Add([]byte(s))
	}
	charm := &CharmMeta{Name: "db", Actions: map[string]ActionSpec{"backup": {Params: map[string]any{
		"dest":  map[string]any{"type": "string", "minLength": 1.0},
		"level": map[string]any{"type": "integer", "default": 3.0, "minimum": 1.0, "maximum": 9.0},
		"mode":  map[string]any{"enum": []any{"full", "diff"}},
		"opts":  map[string]any{"type": "object", "default": map[string]any{}, "properties": map[string]any{"fast": map[string]any{"type": "boolean", "default": true}}},
		"tags":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
	}, Required: []string{"dest"}, Closed: true}}}
	f.Fuzz(func(t *testing.T, data []byte) {
		var params map[string]any
		if json.Unmarshal(data, &params) != nil {
			return
		}
		out, err := CheckActionParams(charm, "backup", params)
		if err != nil {
			return
		}
		if err := checkActionData("params", out); err != nil {
			t.Fatalf("accepted %s as %v: %v", data, out, err)
		}
		b, _ := json.Marshal(out)
		var round map[string]any
		_ = json.Unmarshal(b, &round)
		again, err := CheckActionParams(charm, "backup", round)
		if err != nil {
			t.Fatalf("accepted %s, then refused its defaulted params %s: %v", data, b, err)
		}
		if b2, _ := json.Marshal(again); string(b2) != string(b) {
			t.Fatalf("checking again changed %s to %s", b, b2)
		}
	})
}
