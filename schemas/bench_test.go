package schemas

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// genEnvironment writes an environment of n services, each with config,
// and a relation from each service to the next.
func genEnvironment(tb testing.TB, n int) string {
	var b strings.Builder
	b.WriteString("apiVersion: \"fixpoint/v1\"\nname: \"bench\"\nservices: {\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "\t\"s%d\": {charm: \"./charms/c%d\", units: %d, config: {port: %d, name: \"svc-%d\", debug: true}, placement: [\"m%d\"]}\n", i, i%10, i%3, 8000+i, i, i%5)
	}
	b.WriteString("}\nrelations: {\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "\t\"r%d\": [\"s%d:db\", \"s%d\"]\n", i, i-1, i)
	}
	b.WriteString("}\n")
	dir := tb.TempDir()
	write(tb, dir, map[string]string{"env.cue": b.String()})
	return filepath.Join(dir, "env.cue")
}

func BenchmarkLoadEnvironment(b *testing.B) {
	for _, n := range []int{100, 1000, 5000} {
		b.Run(fmt.Sprintf("services=%d", n), func(b *testing.B) {
			file := genEnvironment(b, n)
			b.ReportAllocs()
			for b.Loop() {
				env, err := LoadEnvironment(file)
				if err != nil {
					b.Fatal(err)
				}
				if len(env.Env.Services) != n {
					b.Fatalf("%d services", len(env.Env.Services))
				}
			}
		})
	}
}

var benchResult = []byte(`{"relations": {"db:7": {"local": {"host": "10.0.0.1", "port": "5432"}}, "peers:2": {"local": {"id": "3"}, "app": {"leader": "db/0"}}}, "status": {"state": "active", "message": "ready"}, "state": {"gen": "4"}, "ports": ["5432/tcp"]}`)

// BenchmarkValidateResult compares the Go fast path that ValidateResult
// takes for good results with evaluating #Result in CUE.
func BenchmarkValidateResult(b *testing.B) {
	b.Run("go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := ValidateResult(benchResult); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cue", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := validateJSON(benchResult, "#Result"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
