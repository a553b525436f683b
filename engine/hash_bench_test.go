package engine

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
)

// bigUniverse is a unit in a relation with n remote units and n peers,
// each with a few settings, like the demo's db at scale.
func bigUniverse(n int) *charmapi.Universe {
	u := &charmapi.Universe{API: charmapi.API, Unit: "db/0", Service: "db", Life: "alive", Config: map[string]any{"port": 6379.0, "secret": "x"}}
	for _, name := range []string{"db", "cluster"} {
		r := charmapi.Relation{Ident: name + ":1", Name: name, Units: map[string]map[string]string{}}
		for i := 0; i < n; i++ {
			r.Units[fmt.Sprintf("web/%d", i)] = map[string]string{"database": "shop", "private-address": "10.0.0.1", "port": "8080", "address": "10.0.0.1"}
		}
		u.Relations = append(u.Relations, r)
	}
	return u
}

// BenchmarkHash is the staleness hash of a universe with 100 members on
// each of two relations; BenchmarkHashJSON is the encoding/json digest it
// replaced, for comparison.
func BenchmarkHash(b *testing.B) {
	u := bigUniverse(100)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_, n := hashCounted(u)
		b.SetBytes(int64(n))
	}
}

func BenchmarkHashJSON(b *testing.B) {
	u := bigUniverse(100)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		h := sha256.New()
		_ = json.NewEncoder(h).Encode(u)
		h.Sum(nil)
	}
}
