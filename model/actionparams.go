package model

import (
	"fmt"
	"maps"
	"math"
	"sort"
	"strings"
)

// ActionSpec is one action a charm declares in actions.yaml or
// charmcraft.yaml: its params are a JSON schema object, as Juju's.
type ActionSpec struct {
	Description string `json:"description,omitempty"`
	// Params maps each param to its JSON schema.
	Params   map[string]any `json:"params,omitempty"`
	Required []string       `json:"required,omitempty"`
	// Closed is additionalProperties: false: params not declared are
	// refused. Juju's default, additionalProperties true, leaves it false.
	Closed bool `json:"closed,omitempty"`
}

// CheckActionParams checks params against charm's declaration of action
// and returns them with the declared defaults filled in. It is the one
// check: the API runs it before proposing, the FSM again when applying.
func CheckActionParams(charm *CharmMeta, action string, params map[string]any) (map[string]any, error) {
	if charm == nil {
		return nil, fmt.Errorf("the unit's charm is not known")
	}
	spec, ok := charm.Actions[action]
	if !ok {
		names := make([]string, 0, len(charm.Actions))
		for n := range charm.Actions {
			names = append(names, n)
		}
		sort.Strings(names)
		if len(names) == 0 {
			return nil, fmt.Errorf("charm %s declares no actions", charm.Name)
		}
		return nil, fmt.Errorf("charm %s has no action %s; it declares %s", charm.Name, Quote(action, 24), strings.Join(names, ", "))
	}
	if err := checkActionData("params", params); err != nil {
		return nil, err
	}
	schema := map[string]any{"type": "object", "properties": spec.Params}
	if len(spec.Required) > 0 {
		req := make([]any, len(spec.Required))
		for i, r := range spec.Required {
			req[i] = r
		}
		schema["required"] = req
	}
	if spec.Closed {
		schema["additionalProperties"] = false
	}
	if params == nil {
		params = map[string]any{}
	}
	out, err := checkSchema("params", schema, params)
	if err != nil {
		return nil, err
	}
	m, _ := out.(map[string]any)
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}

// checkSchema checks v against the subset of JSON schema actions use
// (type, enum, properties, required, additionalProperties, items,
// minimum, maximum, minLength, maxLength, default) and returns v with
// defaults filled in. at names v in errors ("params.a.b").
func checkSchema(at string, schema map[string]any, v any) (any, error) {
	if t, ok := schema["type"]; ok {
		if err := checkType(at, t, v); err != nil {
			return nil, err
		}
	}
	if enum, ok := schema["enum"].([]any); ok && !inEnum(enum, v) {
		return nil, fmt.Errorf("%s: %s is not one of %v", at, shortValue(v), enum)
	}
	switch x := v.(type) {
	case map[string]any:
		return checkObject(at, schema, x)
	case []any:
		items, _ := schema["items"].(map[string]any)
		if items == nil {
			return x, nil
		}
		out := make([]any, len(x))
		for i, e := range x {
			var err error
			if out[i], err = checkSchema(fmt.Sprintf("%s[%d]", at, i), items, e); err != nil {
				return nil, err
			}
		}
		return out, nil
	case float64:
		if m, ok := schema["minimum"].(float64); ok && x < m {
			return nil, fmt.Errorf("%s: %v is below the minimum %v", at, x, m)
		}
		if m, ok := schema["maximum"].(float64); ok && x > m {
			return nil, fmt.Errorf("%s: %v is above the maximum %v", at, x, m)
		}
	case string:
		if m, ok := schema["minLength"].(float64); ok && float64(len([]rune(x))) < m {
			return nil, fmt.Errorf("%s: %s is shorter than %v characters", at, shortValue(x), m)
		}
		if m, ok := schema["maxLength"].(float64); ok && float64(len([]rune(x))) > m {
			return nil, fmt.Errorf("%s: a string longer than %v characters", at, m)
		}
	}
	return v, nil
}

func checkObject(at string, schema map[string]any, x map[string]any) (any, error) {
	props, _ := schema["properties"].(map[string]any)
	out := maps.Clone(x)
	for _, k := range sortedKeys(x) {
		ps, ok := props[k].(map[string]any)
		if !ok {
			if schema["additionalProperties"] == false {
				return nil, fmt.Errorf("%s: %s is not a declared parameter (declared: %s)", at, Quote(k, 24), strings.Join(sortedKeys(props), ", "))
			}
			continue
		}
		var err error
		if out[k], err = checkSchema(at+"."+k, ps, x[k]); err != nil {
			return nil, err
		}
	}
	for _, k := range sortedKeys(props) {
		if _, ok := out[k]; ok {
			continue
		}
		ps, _ := props[k].(map[string]any)
		if d, ok := ps["default"]; ok {
			// A default object gets its own properties' defaults.
			v, err := checkSchema(at+"."+k, ps, d)
			if err != nil {
				return nil, fmt.Errorf("the charm's default: %w", err)
			}
			out[k] = v
		}
	}
	if req, ok := schema["required"].([]any); ok {
		for _, r := range req {
			if k, _ := r.(string); k != "" {
				if _, ok := out[k]; !ok {
					return nil, fmt.Errorf("%s: %s is required", at, Quote(k, 24))
				}
			}
		}
	}
	return out, nil
}

func checkType(at string, t, v any) error {
	var types []string
	switch x := t.(type) {
	case string:
		types = []string{x}
	case []any:
		for _, e := range x {
			if s, ok := e.(string); ok {
				types = append(types, s)
			}
		}
	default:
		return nil
	}
	for _, t := range types {
		if isType(t, v) {
			return nil
		}
	}
	return fmt.Errorf("%s: %s is not of type %s", at, shortValue(v), strings.Join(types, " or "))
}

func isType(t string, v any) bool {
	switch t {
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f) && !math.IsInf(f, 0)
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "null":
		return v == nil
	}
	return true
}

func inEnum(enum []any, v any) bool {
	for _, e := range enum {
		if fmt.Sprint(e) == fmt.Sprint(v) {
			return true
		}
	}
	return false
}

func shortValue(v any) string {
	if s, ok := v.(string); ok {
		return Quote(s, 24)
	}
	s := fmt.Sprint(v)
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return s
}

// WholeNumbers is a decoded JSON value with its whole numbers as int64,
// so that YAML and JSON print 6379 and 1234567, not 6379.0 or
// 1.234567e+06. Maps and lists are copied; other values are returned as
// they are.
func WholeNumbers(value any) any {
	switch v := value.(type) {
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return int64(v)
		}
		return v
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = WholeNumbers(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = WholeNumbers(x)
		}
		return out
	}
	return value
}
