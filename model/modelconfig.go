package model

import (
	"fmt"
	"time"
)

// Model config, as Juju's model-config: the settings of an environment
// fixpoint honours, declared under model_config in its document. Only
// the keys listed here are taken; each is checked when the environment
// is resolved and replicated in the state (State.UpdateStatus), which the
// engine reads.

// ModelConfigUpdateStatus is Juju's update-status-hook-interval: how
// long a settled unit waits after its last run before update-status runs
// on it, in this environment; a Go duration ("1m", "5m").
const ModelConfigUpdateStatus = "update-status-hook-interval"

// ModelConfigKeys are the model-config keys fixpoint takes.
var ModelConfigKeys = []string{ModelConfigUpdateStatus}

// The bounds of update-status-hook-interval, Juju's.
const (
	MinUpdateStatus = 10 * time.Second
	MaxUpdateStatus = time.Hour
)

// SetModelConfig is the change kind of the environment's model config;
// Key is the setting, Old and New its values ("" for unset).
const SetModelConfig = "model-config"

// resolveModelConfig checks env's model config into d.
func resolveModelConfig(env *Environment, d *Desired, ps *Problems) {
	for _, k := range sortedKeys(env.ModelConfig) {
		path := []string{"model_config", k}
		v := env.ModelConfig[k]
		if k != ModelConfigUpdateStatus {
			ps.add(path, "fixpoint takes no model-config key %s (it takes: %s)", Quote(k, 48), listOr(ModelConfigKeys))
			continue
		}
		dur, err := time.ParseDuration(v)
		if err != nil || dur < MinUpdateStatus || dur > MaxUpdateStatus {
			ps.add(path, "%s is %s; give a duration from %s to %s, e.g. \"5m\"", k, Quote(v, 32), MinUpdateStatus, MaxUpdateStatus)
			continue
		}
		d.UpdateStatus = dur
	}
}

// modelConfigChanges lists the change that takes s's model config to d's.
func modelConfigChanges(s *State, d *Desired) []Change {
	if s.UpdateStatus == int64(d.UpdateStatus) {
		return nil
	}
	return []Change{{Kind: SetModelConfig, Key: ModelConfigUpdateStatus, Old: durationString(s.UpdateStatus), New: durationString(int64(d.UpdateStatus))}}
}

// durationString is ns as a duration, "" for none.
func durationString(ns int64) string {
	if ns == 0 {
		return ""
	}
	return time.Duration(ns).String()
}

// modelConfigSpec is the model config the state holds, for a document
// made from it.
func (s *State) modelConfigSpec() map[string]string {
	if s.UpdateStatus == 0 {
		return nil
	}
	return map[string]string{ModelConfigUpdateStatus: durationString(s.UpdateStatus)}
}

// modelConfigString words a model-config change for a plan.
func modelConfigString(c Change) string {
	old, new := c.Old, c.New
	if old == "" {
		old = "(default)"
	}
	if new == "" {
		new = "(default)"
	}
	return fmt.Sprintf("~ model-config %s %s -> %s", c.Key, old, new)
}
