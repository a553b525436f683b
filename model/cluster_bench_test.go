package model

import (
	"fmt"
	"testing"
)

// BenchmarkFanOutLiveness is what a machine's liveness entry costs with
// the same units spread over 1, 10 and 100 environments: one apply per
// environment, each marking its own units.
func BenchmarkFanOutLiveness(b *testing.B) {
	const units = 1000
	for _, envs := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("envs=%d", envs), func(b *testing.B) {
			cl := NewCluster()
			idx := uint64(1)
			if _, err := cl.Apply(idx, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "m0", Address: "10.0.0.1"}}); err != nil {
				b.Fatal(err)
			}
			for i := 0; i < envs; i++ {
				name := ""
				if i > 0 {
					name = fmt.Sprintf("e%d", i)
					idx++
					if _, err := cl.Apply(idx, &Command{Op: OpEnvAdd, EnvAdd: &EnvAdd{Name: name, UUID: fmt.Sprintf("%08x-0000-4000-8000-000000000000", i)}}); err != nil {
						b.Fatal(err)
					}
				}
				idx++
				file := name
				if file == "" {
					file = "shop"
				}
				if _, err := cl.Apply(idx, deployTo(name, file, units/envs)); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				idx++
				lost := &Command{Op: OpLiveness, Liveness: &SetLiveness{Lost: map[string]bool{"m0": i%2 == 0}}}
				if _, err := cl.Apply(idx, lost); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
