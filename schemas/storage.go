package schemas

import (
	"encoding/json"
	"sort"

	"cuelang.org/go/cue/ast"

	"github.com/fixpoint/fixpoint/model"
)

// storageDoc is #Storage decoded.
type storageDoc struct {
	Type        string          `json:"type"`
	Description string          `json:"description"`
	Location    string          `json:"location"`
	MinimumSize json.RawMessage `json:"minimum-size"`
	Multiple    *struct {
		Range json.RawMessage `json:"range"`
	} `json:"multiple"`
	ReadOnly bool `json:"read-only"`
	Shared   bool `json:"shared"`
}

// storageMeta converts the declared stores to the model's shape: a range
// becomes its bounds (Juju's rules, model.ParseStorageRange), reported at
// its file:line when it is not one.
func storageMeta(meta *model.CharmMeta, docs map[string]storageDoc, idx *posIndex) error {
	if len(docs) == 0 {
		return nil
	}
	e := &Error{}
	names := make([]string, 0, len(docs))
	for n := range docs {
		names = append(names, n)
	}
	sort.Strings(names)
	meta.Storage = map[string]model.StorageMeta{}
	for _, n := range names {
		d := docs[n]
		st := model.StorageMeta{Type: d.Type, Description: d.Description, Location: d.Location,
			MinimumSize: scalar(d.MinimumSize), Min: 1, Max: 1, ReadOnly: d.ReadOnly, Shared: d.Shared}
		if d.Multiple != nil {
			min, max, err := model.ParseStorageRange(scalar(d.Multiple.Range))
			if err != nil {
				path := []string{"storage", n, "multiple", "range"}
				e.Problems = append(e.Problems, problemAt(idx.lookup(path), path, err.Error()))
				continue
			}
			st.Min, st.Max = min, max
		}
		meta.Storage[n] = st
	}
	return e.errOrNil()
}

// scalar is a YAML string or number as text: "1-3", 2, "1G".
func scalar(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// blockStores calls fn for each store of type block under a metadata
// storage: field: fixpoint attaches no block device, so the charm gets no
// instance of it.
func blockStores(field *ast.Field, fn func(name string, line int)) {
	s, ok := field.Value.(*ast.StructLit)
	if !ok {
		return
	}
	for _, d := range s.Elts {
		store, ok := d.(*ast.Field)
		if !ok {
			continue
		}
		body, ok := store.Value.(*ast.StructLit)
		if !ok {
			continue
		}
		for _, e := range body.Elts {
			if f, ok := e.(*ast.Field); ok && labelName(f) == "type" {
				if lit, ok := f.Value.(*ast.BasicLit); ok && (lit.Value == `"block"` || lit.Value == "block") {
					fn(labelName(store), f.Pos().Line())
				}
			}
		}
	}
}
