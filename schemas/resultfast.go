package schemas

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"

	"github.com/fixpoint/fixpoint/model"
)

// checkResultGo checks a result against the rules of #Result (result.cue)
// in plain Go, without evaluating CUE. The rules of each field are
// model's (CheckPort, CheckStatus, CheckSettings): the one authority the
// engine's decoder and the FSM use too. TestResultRulesAgree holds the
// CUE schema and the engine to it, case by case.
func checkResultGo(data []byte) error {
	v, err := decodeStrict(data)
	if err != nil {
		return &Error{Problems: []Problem{{Msg: err.Error()}}}
	}
	c := &goChecker{}
	c.result(v)
	if len(c.out) == 0 {
		return nil
	}
	e := &Error{Problems: c.out}
	e.Sort()
	return e
}

type goChecker struct{ out []Problem }

func (c *goChecker) add(path []string, format string, args ...any) {
	c.out = append(c.out, Problem{Path: FormatPath(path), Msg: fmt.Sprintf(format, args...)})
}

func (c *goChecker) result(v any) {
	m, ok := v.(map[string]any)
	if !ok {
		c.add(nil, "a result must be a JSON object, not %s", jsonKind(v))
		return
	}
	for _, k := range sortedMapKeys(m) {
		p := []string{k}
		switch k {
		case "relations":
			rels, ok := m[k].(map[string]any)
			if !ok {
				c.add(p, "must be an object of relation ident to writes, not %s", jsonKind(m[k]))
				continue
			}
			for _, id := range sortedMapKeys(rels) {
				rp := []string{k, id}
				rr, ok := rels[id].(map[string]any)
				if !ok {
					c.add(rp, "must be an object with local and/or app, not %s", jsonKind(rels[id]))
					continue
				}
				for _, b := range sortedMapKeys(rr) {
					if b != "local" && b != "app" {
						c.add(append(rp, b), "unknown field %q; allowed here: local, app", b)
						continue
					}
					c.settings(append(rp, b), rr[b])
				}
			}
		case "leader_data", "state":
			c.settings(p, m[k])
		case "status":
			st, ok := m[k].(map[string]any)
			if !ok {
				c.add(p, "must be an object {state, message}, not %s", jsonKind(m[k]))
				continue
			}
			if _, ok := st["state"]; !ok {
				c.add(append(p, "state"), "is missing")
			}
			for _, f := range sortedMapKeys(st) {
				switch f {
				case "state":
					s, ok := st[f].(string)
					if !ok {
						c.add(append(p, f), "must be a string, not %s", jsonKind(st[f]))
					} else if field, err := model.CheckStatus(s, ""); err != nil && field == f {
						c.add(append(p, f), "%v", err)
					}
				case "message":
					if s, ok := st[f].(string); !ok {
						c.add(append(p, f), "must be a string, not %s", jsonKind(st[f]))
					} else if field, err := model.CheckStatus(model.StatusStates[0], s); err != nil && field == f {
						c.add(append(p, f), "%v", err)
					}
				default:
					c.add(append(p, f), "unknown field %q; allowed here: state, message", f)
				}
			}
		case "ports":
			ports, ok := m[k].([]any)
			if !ok {
				c.add(p, "must be a list of ports, not %s", jsonKind(m[k]))
				continue
			}
			if len(ports) > model.MaxPorts {
				c.add(p, "%d ports; the limit is %d", len(ports), model.MaxPorts)
			}
			for i, port := range ports {
				s, ok := port.(string)
				if !ok {
					c.add(append(p, fmt.Sprint(i)), "must be a string, not %s", jsonKind(port))
				} else if err := model.CheckPort(s); err != nil {
					c.add(append(p, fmt.Sprint(i)), "%v", err)
				}
			}
		case "storage_add":
			c.storageAdd(p, m[k])
		case "secrets":
			c.secrets(p, m[k])
		case "reboot":
			if _, ok := m[k].(bool); !ok {
				c.add(p, "must be true or false, not %s", jsonKind(m[k]))
			}
		default:
			c.add(p, "unknown field %q; allowed here: relations, leader_data, status, state, ports, storage_add, secrets, reboot", k)
		}
	}
}

func (c *goChecker) settings(path []string, v any) {
	m, ok := v.(map[string]any)
	if !ok {
		c.add(path, "must be an object of string values, not %s", jsonKind(v))
		return
	}
	bag := make(map[string]string, len(m))
	typed := true
	for _, k := range sortedMapKeys(m) {
		s, ok := m[k].(string)
		if !ok {
			c.add(append(path[:len(path):len(path)], k), "settings values must be strings; encode other values, e.g. as JSON text")
			typed = false
		}
		bag[k] = s
	}
	if !typed {
		return
	}
	if k, err := model.CheckSettings(bag); err != nil {
		if k != "" {
			path = append(path[:len(path):len(path)], k)
		}
		c.add(path, "%v", err)
	}
}

// decodeStrict decodes JSON into maps, slices and scalars like
// encoding/json, but refuses a key given twice in one object: the engine
// would keep the last, which hides a bug in the hook.
func decodeStrict(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not valid JSON: more than one value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			m := map[string]any{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k := kt.(string)
				if _, dup := m[k]; dup {
					return nil, fmt.Errorf("key %q appears twice in one object", k)
				}
				if m[k], err = decodeValue(dec); err != nil {
					return nil, err
				}
			}
			_, err := dec.Token()
			return m, err
		case '[':
			l := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			_, err := dec.Token()
			return l, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return t, nil
	}
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func sortedMapKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// storageAdd checks storage_add: store names to counts, by the model's
// rule (model.CheckStorageAdd).
func (c *goChecker) storageAdd(path []string, v any) {
	m, ok := v.(map[string]any)
	if !ok {
		c.add(path, "must be an object of store names to counts, not %s", jsonKind(v))
		return
	}
	add := make(map[string]int, len(m))
	for _, k := range sortedMapKeys(m) {
		num, ok := m[k].(json.Number)
		n, err := num.Int64()
		if !ok || err != nil || n < 0 || n > model.MaxUnitStorage {
			c.add(append(path, k), "must be a whole number from 1 to %d", model.MaxUnitStorage)
			continue
		}
		add[k] = int(n)
	}
	if err := model.CheckStorageAdd(add); err != nil {
		c.add(path, "%v", err)
	}
}

// secretFields are a secret change's fields and whether each is a string.
var secretFields = map[string]string{"op": "string", "id": "string", "owner": "string", "label": "string",
	"description": "string", "expire": "string", "rotate": "string", "content": "settings", "revision": "int",
	"relation": "string", "unit": "string", "app": "string"}

// secrets checks a result's secret changes' shape; what each may do is
// the engine's (engine.DecodeResult) to judge against the universe.
func (c *goChecker) secrets(path []string, v any) {
	list, ok := v.([]any)
	if !ok {
		c.add(path, "must be a list of secret changes, not %s", jsonKind(v))
		return
	}
	if len(list) > model.MaxSecretChanges {
		c.add(path, "%d secret changes; the limit is %d", len(list), model.MaxSecretChanges)
	}
	for i, e := range list {
		p := append(path[:len(path):len(path)], fmt.Sprint(i))
		m, ok := e.(map[string]any)
		if !ok {
			c.add(p, "must be an object, not %s", jsonKind(e))
			continue
		}
		for _, f := range []string{"op", "id"} {
			if _, ok := m[f]; !ok {
				c.add(append(p, f), "is missing")
			}
		}
		for _, f := range sortedMapKeys(m) {
			fp := append(p[:len(p):len(p)], f)
			switch secretFields[f] {
			case "string":
				s, ok := m[f].(string)
				switch {
				case !ok:
					c.add(fp, "must be a string, not %s", jsonKind(m[f]))
				case f == "op" && !slices.Contains([]string{"add", "set", "remove", "grant", "revoke", "track"}, s):
					c.add(fp, "op must be \"add\", \"set\", \"remove\", \"grant\", \"revoke\" or \"track\"")
				case f == "owner" && s != "unit" && s != "application":
					c.add(fp, "owner must be \"unit\" or \"application\"")
				}
			case "int":
				n, err := strconv.Atoi(fmt.Sprint(m[f]))
				if _, isNum := m[f].(json.Number); !isNum || err != nil || n < 0 {
					c.add(fp, "must be a whole number, 0 or more")
				}
			case "settings":
				c.settings(fp, m[f])
			default:
				c.add(fp, "unknown field %q", f)
			}
		}
	}
}
