package wire

import (
	"strings"
	"testing"
)

// FuzzUnitKey holds SplitUnitKey, which reads agents' heartbeat keys, to
// UnitKey's inverse on every key an agent could send: no key is read as
// another environment's unit than it names.
func FuzzUnitKey(f *testing.F) {
	for _, k := range []string{"db/0", "dev:db/0", ":db/0", "dev:", "a:b:c/1", ""} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		env, unit := SplitUnitKey(key)
		if strings.Contains(env, ":") {
			t.Fatalf("SplitUnitKey(%q) = env %q, which holds the separator", key, env)
		}
		if env != "" && UnitKey(env, unit) != key {
			t.Fatalf("SplitUnitKey(%q) = %q, %q, which UnitKey writes as %q", key, env, unit, UnitKey(env, unit))
		}
		if env == "" && !strings.HasPrefix(key, ":") && unit != key {
			t.Fatalf("bare key %q read as unit %q", key, unit)
		}
	})
}
