// Command actions measures what `fixpoint run` of a no-op action costs on
// `up`, beside what one hook run costs there: the wall time of the whole
// command (the client starting, the operation queued, handed to the
// agent, started and finished, three Raft entries, the answer) against
// the median duration the agent records for the unit's update-status
// hook runs (a process spawned with its hook tools' socket, one tool call),
// in the same run. The ratio is the price of the operation machinery in
// hook runs.
//
//	go run ./bench/actions                 # 20 runs
//	go run ./bench/actions -n 50 -fixpoint ./fixpoint
//
// It starts `fixpoint up --update-status-interval 1s` with
// testdata/charms/classic-kv (one unit) on a fresh data directory, waits
// for the fixed point, times -n runs of `fixpoint run kv/0 noop` one after
// another, then reads the durations of the unit's runs after install (the
// timer's update-status) from `logs -o json`, waiting for five, and
// prints both medians and the p90. The last line of the output is one JSON object with every figure.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

func main() {
	n := flag.Int("n", 20, "runs of the no-op action")
	bin := flag.String("fixpoint", "", "fixpoint binary (default: built from ./cmd/fixpoint)")
	charm := flag.String("charm", "testdata/charms/classic-kv", "the classic charm with a noop action")
	flag.Parse()
	if err := run(*n, *bin, *charm); err != nil {
		fmt.Fprintln(os.Stderr, "actions:", err)
		os.Exit(1)
	}
}

func run(n int, bin, charm string) error {
	dir, err := os.MkdirTemp("", "bench-actions-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if bin == "" {
		bin = filepath.Join(dir, "fixpoint")
		if out, err := exec.Command("go", "build", "-o", dir+"/", "./cmd/fixpoint", "./cmd/fixpoint-hook", "./cmd/fixpoint-sh").CombinedOutput(); err != nil {
			return fmt.Errorf("build: %v\n%s", err, out)
		}
	}
	charm, err = filepath.Abs(charm)
	if err != nil {
		return err
	}
	env := filepath.Join(dir, "env.cue")
	if err := os.WriteFile(env, []byte(fmt.Sprintf("apiVersion: \"fixpoint/v1\"\nname: \"bench\"\nservices: kv: {charm: %q, units: 1}\n", charm)), 0o644); err != nil {
		return err
	}
	data := filepath.Join(dir, "data")
	up := exec.Command(bin, "up", "-f", env, "--data-dir", data, "--update-status-interval", "1s")
	if err := up.Start(); err != nil {
		return err
	}
	defer func() {
		_ = up.Process.Kill()
		_ = up.Wait()
	}()
	cli := func(args ...string) ([]byte, error) {
		return exec.Command(bin, append(args, "--data-dir", data)...).Output()
	}
	if out, err := exec.Command(bin, "wait", "--timeout", "3m", "--data-dir", data).CombinedOutput(); err != nil {
		return fmt.Errorf("wait: %v\n%s", err, out)
	}
	var runs []time.Duration
	for i := 0; i < n; i++ {
		start := time.Now()
		if out, err := cli("run", "kv/0", "noop"); err != nil {
			return fmt.Errorf("run %d: %v\n%s", i, err, out)
		}
		runs = append(runs, time.Since(start))
	}
	// The unit's first run is install; every later one is the timer's
	// update-status. Wait for a few.
	var hooks []time.Duration
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		out, err := cli("logs", "kv/0", "-o", "json")
		if err != nil {
			return fmt.Errorf("logs: %v", err)
		}
		type hookRun struct {
			Seq      uint64        `json:"seq"`
			Duration time.Duration `json:"duration"`
		}
		var all []hookRun
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			var r hookRun
			if json.Unmarshal([]byte(line), &r) == nil && r.Duration > 0 {
				all = append(all, r)
			}
		}
		sort.Slice(all, func(i, j int) bool { return all[i].Seq < all[j].Seq })
		if len(all) >= 6 || time.Now().After(deadline) {
			hooks = hooks[:0]
			for _, r := range all[min(1, len(all)):] {
				hooks = append(hooks, r.Duration)
			}
			break
		}
	}
	if len(hooks) == 0 {
		return fmt.Errorf("no update-status run in the unit's logs within a minute")
	}
	sort.Slice(hooks, func(i, j int) bool { return hooks[i] < hooks[j] })
	hook := hooks[len(hooks)/2]
	sort.Slice(runs, func(i, j int) bool { return runs[i] < runs[j] })
	median, p90 := runs[len(runs)/2], runs[len(runs)*9/10]
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("%-32s %s (%d runs)\n", "update-status hook, median", hook.Round(time.Microsecond), len(hooks))
	fmt.Printf("%-32s %s\n", "fixpoint run noop, median", median.Round(time.Microsecond))
	fmt.Printf("%-32s %s\n", "fixpoint run noop, p90", p90.Round(time.Microsecond))
	fmt.Printf("%-32s %.1f\n", "ratio (median / hook)", float64(median)/float64(hook))
	res := map[string]any{"runs": n, "hook_runs": len(hooks), "hook_median_ms": ms(hook), "run_median_ms": ms(median), "run_p90_ms": ms(p90),
		"ratio": float64(median) / float64(hook), "loadavg": strings.TrimSpace(string(load))}
	b, _ := json.Marshal(res)
	fmt.Println(string(b))
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
