package wire

import "strings"

// A unit of an environment other than the default one is named on the
// agent's wire (a heartbeat's running, kept and released units, and its
// gone answer) by a unit key, "ENV:SERVICE/N": two environments may both
// have db/0. A bare name, which is all an agent built before environments
// sends, is the default environment's unit. Neither an environment nor a
// unit name holds ":", so the key splits back without ambiguity.

// UnitKey names unit of environment env ("" the default one) on the wire.
func UnitKey(env, unit string) string {
	if env == "" {
		return unit
	}
	return env + ":" + unit
}

// SplitUnitKey is UnitKey's inverse: a bare name is the default
// environment's unit.
func SplitUnitKey(key string) (env, unit string) {
	if env, unit, ok := strings.Cut(key, ":"); ok {
		return env, unit
	}
	return "", key
}

// Key is w's unit key.
func (w *Work) Key() string { return UnitKey(w.Env, w.Unit) }
