package legacy

import (
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
)

// FuzzActionSet checks action-set's argument parsing on any input: it
// never panics, and every path it accepts is made of keys Juju accepts,
// none of them reserved.
func FuzzActionSet(f *testing.F) {
	for _, s := range []string{"a=b", "outfile.size=10G", "foo.bar.zab=4", "a..b=1", "-a=1", "stdout=x", "A=1", "a=", "=x", "a.b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		paths, err := ParseActionSet(strings.Split(arg, "\n"))
		if err != nil {
			return
		}
		for _, p := range paths {
			if len(p) < 2 || reservedResults[p[0]] {
				t.Fatalf("accepted %q as %q", arg, p)
			}
			for _, k := range p[:len(p)-1] {
				if !charmapi.ActionKey(k) {
					t.Fatalf("accepted key %q of %q", k, arg)
				}
			}
			results := map[string]any{}
			charmapi.SetPath(results, p[:len(p)-1], p[len(p)-1])
		}
	})
}
