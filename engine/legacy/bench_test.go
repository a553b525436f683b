package legacy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
)

// BenchmarkToolCall measures what one hook tool call costs a hook, the way
// old charms make it (`x=$(relation-get ...)` in sh), against references
// measured in the same run: `x=$(:)`, the fork of the hook's shell alone,
// and `x=$(/bin/true)`, a fork and the exec of a small C program. Each
// iteration is one Run whose install hook makes 100 calls. It reports CPU
// milliseconds per call of the hook and everything it ran (cpu-ms/call,
// from the children's rusage) and of this process serving the tools
// (agent-cpu-ms/call): CPU, not wall time, because the machine is shared.
// Compare the sub-benchmarks' ratios, not their absolute figures. The
// -builtin runs are the same hooks in fixpoint-sh, where the tool call is
// a builtin and $(...) of a builtin forks nothing (the hook's CPU then
// includes fixpoint-sh's own start, once per 100 calls). Each call names
// a different key (k$i), so that every one reaches the agent; -kept asks
// the same read 100 times, which fixpoint-sh answers itself after the
// first.
//
// FIXPOINT_BENCH_TOOLS, a comma-separated list of other builds of
// fixpoint-hook (an older commit's, say), adds a relation-get run through
// each, named by its position in the list, to compare builds in one run.
//
//	go test ./engine/legacy -run XXX -bench ToolCall -benchtime 5x
func BenchmarkToolCall(b *testing.B) {
	const calls = 100
	type bench struct{ name, cmd, tools, shell string }
	benches := []bench{
		{"fork", ":", toolBinary, ""},
		{"true", "/bin/true", toolBinary, ""},
		{"relation-get", "relation-get -r db:3 k$i db/0", toolBinary, ""},
		{"config-get", "config-get k$i", toolBinary, ""},
		{"fallback", fallbackBinary + " relation-get -r db:3 host db/0", toolBinary, ""},
		{"true-builtin", "/bin/true", toolBinary, shellBinary},
		{"relation-get-builtin", "relation-get -r db:3 k$i db/0", toolBinary, shellBinary},
		{"config-get-builtin", "config-get k$i", toolBinary, shellBinary},
		{"relation-get-kept", "relation-get -r db:3 host db/0", toolBinary, shellBinary},
	}
	if other := os.Getenv("FIXPOINT_BENCH_TOOLS"); other != "" {
		for i, path := range strings.Split(other, ",") {
			benches = append(benches, bench{fmt.Sprintf("relation-get-build%d", i+1), "relation-get -r db:3 host db/0", path, ""})
		}
	}
	for _, c := range benches {
		b.Run(c.name, func(b *testing.B) {
			body := fmt.Sprintf("i=0\nwhile [ $i -lt %d ]; do\n\tx=$(%s)\n\ti=$((i + 1))\ndone\n", calls, c.cmd)
			if c.name == "fallback" {
				// The fallback binary is every tool when called by its
				// name; run it through a link as the agent would.
				body = "ln -s " + fallbackBinary + " \"$FIXPOINT_UNIT_DIR/relation-get\"\n" +
					fmt.Sprintf("i=0\nwhile [ $i -lt %d ]; do\n\tx=$(\"$FIXPOINT_UNIT_DIR/relation-get\" -r db:3 host db/0)\n\ti=$((i + 1))\ndone\n", calls)
			}
			charm := writeCharm(b, map[string]string{"install": body})
			want := calls
			switch {
			case c.name == "fork" || strings.HasPrefix(c.name, "true"):
				want = 0
			case strings.HasSuffix(c.name, "-kept"):
				// fixpoint-sh answers the same read again itself.
				want = 1
			}
			var children, self time.Duration
			for b.Loop() {
				u := testUniverse()
				u.Events = []charmapi.Event{{Hook: "install"}}
				c0, s0 := rusage(syscall.RUSAGE_CHILDREN), rusage(syscall.RUSAGE_SELF)
				opts := Options{CharmDir: charm, UnitDir: b.TempDir(), ToolsBinary: c.tools, HookShell: HookShellSystem}
				if c.shell != "" {
					opts.HookShell, opts.ShellBinary = HookShellBuiltin, c.shell
				}
				_, stats, err := Run(context.Background(), opts, u)
				if err != nil {
					b.Fatal(err)
				}
				children += rusage(syscall.RUSAGE_CHILDREN) - c0
				self += rusage(syscall.RUSAGE_SELF) - s0
				if stats.ToolCalls != want {
					b.Fatalf("%d tool calls, want %d", stats.ToolCalls, want)
				}
			}
			n := float64(b.N * calls)
			b.ReportMetric(float64(children.Microseconds())/1000/n, "cpu-ms/call")
			b.ReportMetric(float64(self.Microseconds())/1000/n, "agent-cpu-ms/call")
		})
	}
}

// rusage is the user and system CPU time of who (RUSAGE_SELF or
// RUSAGE_CHILDREN, the reaped children).
func rusage(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkShellHook measures what one classic hook costs in fixpoint-sh,
// its start included: classic-db's install hook, which sources the
// charm's library and makes one tool call, as bench/oldhooks runs it. It
// reports the CPU milliseconds of the hook process (cpu-ms/hook, from the
// children's rusage), against the same hook under the system shell
// (-system) in the same run. FIXPOINT_BENCH_SHELLS, a comma-separated
// list of other builds of fixpoint-sh (an older commit's, say), adds a
// run through each, named by its position in the list, to compare builds
// in one run; alternate them with -count.
//
//	go test ./engine/legacy -run XXX -bench ShellHook -benchtime 50x -count 3
func BenchmarkShellHook(b *testing.B) {
	charm, err := filepath.Abs(filepath.Join("..", "..", "testdata", "charms", "classic-db"))
	if err != nil {
		b.Fatal(err)
	}
	type bench struct{ name, shell string }
	benches := []bench{{"system", ""}, {"builtin", shellBinary}}
	if other := os.Getenv("FIXPOINT_BENCH_SHELLS"); other != "" {
		for i, path := range strings.Split(other, ",") {
			benches = append(benches, bench{fmt.Sprintf("build%d", i+1), path})
		}
	}
	for _, c := range benches {
		b.Run(c.name, func(b *testing.B) {
			var children time.Duration
			for b.Loop() {
				u := testUniverse()
				u.Events = []charmapi.Event{{Hook: "install"}}
				opts := Options{CharmDir: charm, UnitDir: b.TempDir(), ToolsBinary: toolBinary, HookShell: HookShellSystem}
				if c.shell != "" {
					opts.HookShell, opts.ShellBinary = HookShellBuiltin, c.shell
				}
				c0 := rusage(syscall.RUSAGE_CHILDREN)
				_, stats, err := Run(context.Background(), opts, u)
				if err != nil {
					b.Fatal(err)
				}
				children += rusage(syscall.RUSAGE_CHILDREN) - c0
				if stats.ToolCalls != 1 {
					b.Fatalf("%d tool calls, want the install hook's 1", stats.ToolCalls)
				}
			}
			b.ReportMetric(float64(children.Microseconds())/1000/float64(b.N), "cpu-ms/hook")
		})
	}
}
