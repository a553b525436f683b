package schemas

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"go.yaml.in/yaml/v3"

	"github.com/fixpoint/fixpoint/model"
)

// actionDoc is one action of actions.yaml, or of charmcraft.yaml's
// actions: Juju's shape.
type actionDoc struct {
	Description          string         `yaml:"description" json:"description"`
	Params               map[string]any `yaml:"params" json:"params"`
	Required             []string       `yaml:"required" json:"required"`
	AdditionalProperties *bool          `yaml:"additionalProperties" json:"additionalProperties"`
}

// loadActions reads the actions an old charm in dir declares: its
// actions.yaml, or the actions of charmcraft.yaml when craft says that is
// its metadata. Params become plain JSON values, as the state keeps them.
func loadActions(dir string, craft bool) (map[string]model.ActionSpec, error) {
	name := filepath.Join(dir, ActionsFile)
	if craft {
		name = filepath.Join(dir, CharmcraftFile)
	}
	src, err := os.ReadFile(name)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	docs := map[string]*actionDoc{}
	if craft {
		var c struct {
			Actions map[string]*actionDoc `yaml:"actions"`
		}
		err = yaml.Unmarshal(src, &c)
		docs = c.Actions
	} else {
		err = yaml.Unmarshal(src, &docs)
	}
	if err != nil {
		return nil, &Error{Problems: []Problem{{File: rel(name), Msg: "actions: " + err.Error()}}}
	}
	return actionSpecs(docs, name)
}

// actionSpecs checks the actions declared in file and makes them what the
// state keeps: names by Juju's rule, params plain JSON values.
func actionSpecs(docs map[string]*actionDoc, name string) (map[string]model.ActionSpec, error) {
	if len(docs) == 0 {
		return nil, nil
	}
	names := make([]string, 0, len(docs))
	for n := range docs {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make(map[string]model.ActionSpec, len(docs))
	for _, n := range names {
		if err := model.CheckActionName(n); err != nil {
			return nil, &Error{Problems: []Problem{{File: rel(name), Path: n, Msg: err.Error()}}}
		}
		d := docs[n]
		if d == nil {
			d = &actionDoc{}
		}
		// Through JSON: numbers become float64 and maps map[string]any,
		// as they are once replicated.
		b, err := json.Marshal(d)
		if err != nil {
			return nil, &Error{Problems: []Problem{{File: rel(name), Path: n, Msg: fmt.Sprintf("params: %v", err)}}}
		}
		var j actionDoc
		if err := json.Unmarshal(b, &j); err != nil {
			return nil, &Error{Problems: []Problem{{File: rel(name), Path: n, Msg: fmt.Sprintf("params: %v", err)}}}
		}
		spec := model.ActionSpec{Description: j.Description, Params: j.Params, Required: j.Required,
			Closed: j.AdditionalProperties != nil && !*j.AdditionalProperties}
		for p, s := range spec.Params {
			if _, ok := s.(map[string]any); !ok {
				return nil, &Error{Problems: []Problem{{File: rel(name), Path: n + ".params." + p, Msg: "a param is a JSON schema object (type: string, default: ...)"}}}
			}
		}
		out[n] = spec
	}
	return out, nil
}
