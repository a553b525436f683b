package legacy

import (
	"fmt"
	"maps"
	"strings"
	"unicode/utf8"

	"github.com/fixpoint/fixpoint/model"
)

// Juju's charm state (state-get, state-set, state-delete): a map of
// strings per unit that the control plane keeps, which ops uses for
// StoredState when a charm asks for use_juju_for_storage. It lives in the
// unit's private state under model.StateCharmPrefix: replicated with the
// unit, written only when the hook run succeeds (as Juju commits it with
// the hook), and bounded with the rest of that map.

// Juju's bounds on one entry (core/quota: MaxCharmStateKeySize,
// MaxCharmStateValueSize), less the prefix on keys, which the model's
// settings-key bound counts.
const (
	maxCharmStateKey   = model.MaxSettingsKey - len(model.StateCharmPrefix)
	maxCharmStateValue = 64 << 10
)

var stateGetFlags = []flagDef{formatFlag, {name: "strict", isBool: true}}

// charmState is the charm's state as the hook sees it: the unit's with
// the hook's writes, keys without the prefix.
func (w *hookWrites) charmState() map[string]string {
	out := map[string]string{}
	for k, v := range w.state {
		if key, ok := strings.CutPrefix(k, model.StateCharmPrefix); ok {
			out[key] = v
		}
	}
	return out
}

// stateGet is `state-get [KEY|-] [--strict]`: one value ("" for a key
// not set, an error with --strict), or every key and value.
func (w *hookWrites) stateGet(c *call) (any, error) {
	key, err := keyArg(c.f.args)
	if err != nil {
		return nil, err
	}
	if key == "" {
		return w.charmState(), nil
	}
	v, ok := w.state[model.StateCharmPrefix+key]
	if !ok && c.f.bool("strict") {
		return nil, fmt.Errorf("%q not found", key)
	}
	return v, nil
}

// stateSet is `state-set [--file F|-] KEY=VALUE...`: the file's YAML map,
// then the arguments over it. An empty value is kept as one, as Juju's.
func (w *hookWrites) stateSet(c *call) (any, error) {
	values, err := settingsArgs(c)
	if err != nil {
		return nil, err
	}
	for k, v := range values {
		if k == "" || utf8.RuneCountInString(k) > maxCharmStateKey {
			return nil, fmt.Errorf("max allowed key length (%d) exceeded", maxCharmStateKey)
		}
		if len(v) > maxCharmStateValue {
			return nil, fmt.Errorf("max allowed value length (%d) exceeded", maxCharmStateValue)
		}
	}
	next := maps.Clone(w.state)
	if next == nil {
		next = map[string]string{}
	}
	for k, v := range values {
		next[model.StateCharmPrefix+k] = v
	}
	// What the model will take with the result: a hook told now fails
	// here, as Juju's does over its quota, rather than its whole run
	// later.
	if _, err := model.CheckSettings(next); err != nil {
		return nil, fmt.Errorf("max allowed charm state size (%d bytes, keys and values of the unit's state together) exceeded: %v", model.MaxSettingsBytes, err)
	}
	w.state, w.stateWritten = next, true
	return noOutput{}, nil
}

// stateDelete is `state-delete KEY`; a key not set, or none, changes
// nothing.
func (w *hookWrites) stateDelete(c *call) (any, error) {
	args := c.f.args
	if len(args) == 0 {
		return noOutput{}, nil
	}
	if err := checkEmpty(args[1:]); err != nil {
		return nil, err
	}
	k := model.StateCharmPrefix + args[0]
	if _, ok := w.state[k]; !ok {
		return noOutput{}, nil
	}
	next := maps.Clone(w.state)
	delete(next, k)
	w.state, w.stateWritten = next, true
	return noOutput{}, nil
}
