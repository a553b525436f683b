package hookrun

import (
	"context"
	"os/exec"
	"syscall"
	"testing"
)

// BenchmarkRun measures one short hook run under each containment against
// the reference: the same hook started and waited for in a process group of
// its own with nothing else, as runs were before containment. Report the
// ratio of each to "reference" from the same run.
func BenchmarkRun(b *testing.B) {
	dir := b.TempDir()
	hook := scriptIn(b, dir, "echo '{}'")
	b.Run("reference", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command(hook)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if out, err := cmd.Output(); err != nil || len(out) == 0 {
				b.Fatal(err)
			}
		}
	})
	modes := []struct {
		name string
		c    container
	}{{"subreaper", subreaper{}}}
	if c, err := detectCgroup(); err == nil {
		modes = append(modes, struct {
			name string
			c    container
		}{"cgroup", c})
	}
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			saved := containment
			containment = func() container { return m.c }
			defer func() { containment = saved }()
			for b.Loop() {
				if out, err := Run(context.Background(), Spec{Path: hook, Dir: dir}); err != nil || len(out.Stdout) == 0 {
					b.Fatal(err)
				}
			}
		})
	}
}
