package juju

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

// conforms checks doc, a command's JSON output decoded, against ref, its
// reference (testdata/README.md): every key doc has, ref lists ("*"
// standing for any name), with the JSON type ref gives it (null: any).
func conforms(path string, doc, ref any) []string {
	if ref == nil {
		return nil
	}
	switch r := ref.(type) {
	case map[string]any:
		d, ok := doc.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %T, want an object", path, doc)}
		}
		var errs []string
		for _, k := range sortedMapKeys(d) {
			sub, ok := r[k]
			if star, any := r["*"]; any && len(r) == 1 {
				sub, ok = star, true
			}
			if !ok {
				errs = append(errs, fmt.Sprintf("%s: key %q is not Juju's", path, k))
				continue
			}
			errs = append(errs, conforms(path+"."+k, d[k], sub)...)
		}
		return errs
	case []any:
		d, ok := doc.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %T, want a list", path, doc)}
		}
		var errs []string
		for i, e := range d {
			errs = append(errs, conforms(fmt.Sprintf("%s[%d]", path, i), e, r[0])...)
		}
		return errs
	}
	if fmt.Sprintf("%T", doc) != fmt.Sprintf("%T", ref) {
		return []string{fmt.Sprintf("%s: %T %v, want a %T", path, doc, doc, ref)}
	}
	return nil
}

func sortedMapKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// has reports the keys of keys missing from the object at path in doc
// ("*" steps into every entry of a map, "[]" into every item of a list).
func has(doc any, path string, keys ...string) []string {
	steps := strings.Split(path, ".")
	var walk func(v any, i int, at string) []string
	walk = func(v any, i int, at string) []string {
		if i == len(steps) || path == "" {
			m, ok := v.(map[string]any)
			if !ok {
				return []string{at + ": not an object"}
			}
			var missing []string
			for _, k := range keys {
				if _, ok := m[k]; !ok {
					missing = append(missing, at+"."+k)
				}
			}
			return missing
		}
		var out []string
		switch s := steps[i]; s {
		case "*":
			for k, e := range v.(map[string]any) {
				out = append(out, walk(e, i+1, at+"."+k)...)
			}
		case "[]":
			for j, e := range v.([]any) {
				out = append(out, walk(e, i+1, fmt.Sprintf("%s[%d]", at, j))...)
			}
		default:
			out = walk(v.(map[string]any)[s], i+1, at+"."+s)
		}
		return out
	}
	return walk(doc, 0, "")
}

// decoded is v as JSON decodes it back.
func decoded(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func reference(t *testing.T, name string) any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var ref any
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return ref
}

func TestShapesAgainstJujusReference(t *testing.T) {
	src := testSource(t)
	st := src.State
	st.Units["web/0"].Settings = model.NewRelBags(map[int]*model.Bag{1: model.NewBag(map[string]string{"want": "pg"}, 0)})
	st.Relations[1].App = map[string]*model.Bag{"db": model.NewBag(map[string]string{"version": "14"}, 0)}
	unit, _ := ShowUnit(st, "web/0", "1.0")
	secret := SecretDetails(&api.SecretInfo{ID: "secret:a", Owner: "application db", Label: "pw", Revision: 2, Rotate: "daily", NextRotate: "2026-01-02T03:04:05Z",
		Expire: "2026-02-01T00:00:00Z", Description: "d", Content: map[string]string{"k": "v"}, Revisions: []api.SecretRevisionInfo{{Revision: 2, Created: "2026-01-01T00:00:00Z"}},
		Created: "2026-01-01T00:00:00Z", Updated: "2026-01-01T00:00:00Z",
		Grants: []api.SecretGrantInfo{{To: "web", Relation: 1}}}, "shop", func(int) string { return "relation-1" }, true)
	config := ServiceConfig(&api.ServiceConfig{Service: "db", Config: map[string]*api.ConfigValue{
		"port": {Type: "int", Value: 1.0, Default: 1.0, Source: "default", Description: "p"}, "x": {Type: "string", Source: "unset"}}}, "db-charm", false)
	for _, c := range []struct {
		ref      string
		doc      any
		required map[string][]string
	}{
		{"status.json", FullStatus(src), map[string][]string{
			"":                       {"model", "machines", "applications"},
			"model":                  {"name", "type", "controller", "cloud", "version"},
			"applications.*":         {"charm", "charm-origin", "charm-name", "charm-rev", "exposed"},
			"applications.web.units": {"web/0", "web/1"},
		}},
		{"show-unit.json", map[string]UnitInfo{"web/0": unit}, map[string][]string{
			"*":                             {"opened-ports", "charm", "leader"},
			"*.relation-info.[]":            {"relation-id", "endpoint", "related-endpoint", "application-data"},
			"*.relation-info.[].local-unit": {"in-scope", "data"},
		}},
		{"show-model.json", map[string]ModelInfo{"shop": Model(ModelSource{Name: "shop", Controller: "c", Machines: []string{"0"}})}, map[string][]string{
			"*": {"name", "short-name", "model-uuid", "model-type", "controller-uuid", "controller-name", "is-controller", "cloud", "life"},
		}},
		{"secrets.json", map[string]Secret{"a": secret}, map[string][]string{"*": {"revision", "owner", "created", "updated"}, "*.content": {"Data"},
			"*.revisions.[]": {"revision", "created", "updated"}}},
		{"model-config.json", ModelConfig("shop", ModelUUID("shop"), "1m", "5m0s"), map[string][]string{"*": {"Value", "Source"}}},
		{"models.json", Models{Models: []ModelInfo{Model(ModelSource{Name: "shop", Controller: "c", UUID: "913d5c8e-463c-485c-bf0d-d79b5c5b515b"})}, Current: "shop"}, map[string][]string{
			"":          {"models", "current-model"},
			"models.[]": {"name", "short-name", "model-uuid", "model-type", "controller-uuid", "controller-name", "is-controller", "cloud", "life"},
		}},
		{"config.json", config, map[string][]string{"": {"application", "charm", "application-config", "settings"}, "settings.*": {"type", "source"}}},
	} {
		doc := decoded(t, c.doc)
		for _, e := range conforms(strings.TrimSuffix(c.ref, ".json"), doc, reference(t, c.ref)) {
			t.Error(e)
		}
		for path, keys := range c.required {
			for _, m := range has(doc, path, keys...) {
				t.Errorf("%s: %s is missing", c.ref, m)
			}
		}
	}
}

// The check itself catches a key Juju does not have and a wrong type.
func TestConformsCatchesStrangers(t *testing.T) {
	ref := map[string]any{"a": "", "m": map[string]any{"*": map[string]any{"n": 0.0}}, "l": []any{""}}
	doc := map[string]any{"a": "x", "b": 1.0, "m": map[string]any{"k": map[string]any{"n": "1"}}, "l": []any{"x", true}}
	errs := conforms("doc", doc, ref)
	want := []string{`doc: key "b" is not Juju's`, "doc.l[1]: bool true, want a string", "doc.m.k.n: string 1, want a float64"}
	if strings.Join(errs, "\n") != strings.Join(want, "\n") {
		t.Errorf("conforms = %q, want %q", errs, want)
	}
}
