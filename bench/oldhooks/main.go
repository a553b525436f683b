// Command oldhooks measures what running old per-event hooks costs next to
// reconcile hooks. For each size N it runs the same environment twice
// through the real binary: N db units related to N web units, each service
// with its peer relation, once with the reconcile charms
// (testdata/charms/db, web) and once with the same protocol as old hooks
// (testdata/charms/classic-db, classic-web), and prints the reconcile
// calls, the old hook executions and the time from the environment being
// applied to the fixed point.
//
//	go run ./bench/oldhooks                 # N = 10, 50, 100
//	go run ./bench/oldhooks -sizes 10 -timeout 1m
//
// Each run is a `fixpoint up` on a fresh data directory. Reconcile calls
// are the sum of the units' `reconciles` in `status --format json`; old
// hook executions are the lines the classic charms append to hooks.log in
// their unit directories. A run that has not reached the fixed point when
// -timeout passes, or in which a unit fails, is stopped, and what it did
// until then is printed, marked as such.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

func main() {
	sizes := flag.String("sizes", "10,50,100", "comma-separated N: N db units related to N web units")
	timeout := flag.Duration("timeout", time.Minute, "how long one run may take to reach the fixed point before it is stopped")
	flavours := flag.String("flavours", "reconcile,classic", "which charms to run: reconcile, classic or both")
	keep := flag.Bool("keep", false, "keep the temporary directory (environments, data directories, logs)")
	flag.Parse()
	if err := run(*sizes, *flavours, *timeout, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "oldhooks:", err)
		os.Exit(1)
	}
}

// result is what one run measured.
type result struct {
	n          int
	flavour    string
	units      int
	reconciles int
	hooks      int
	took       time.Duration
	converged  bool
	resolved   int // "diverged" verdicts the bench resolved
	note       string
}

func run(sizeList, flavourList string, timeout time.Duration, keep bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var sizes []int
	for _, s := range strings.Split(sizeList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("-sizes: %q is not a positive number", s)
		}
		sizes = append(sizes, n)
	}
	var flavours []string
	for _, f := range strings.Split(flavourList, ",") {
		f = strings.TrimSpace(f)
		if f != "reconcile" && f != "classic" {
			return fmt.Errorf("-flavours: %q is neither reconcile nor classic", f)
		}
		flavours = append(flavours, f)
	}
	root, err := repoRoot()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "oldhooks-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Printf("working in %s\n", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	bin := filepath.Join(tmp, "fixpoint")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/fixpoint")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/fixpoint: %v\n%s", err, out)
	}
	b := &bench{bin: bin, charms: filepath.Join(root, "testdata", "charms"), tmp: tmp, timeout: timeout}
	var results []result
	for _, n := range sizes {
		for _, f := range flavours {
			if ctx.Err() != nil {
				break
			}
			fmt.Fprintf(os.Stderr, "N=%d %s ... ", n, f)
			r, err := b.once(ctx, n, f)
			if err != nil {
				fmt.Fprintln(os.Stderr, "failed")
				return fmt.Errorf("N=%d %s: %w", n, f, err)
			}
			fmt.Fprintf(os.Stderr, "%s\n", r.summary())
			results = append(results, r)
		}
	}
	fmt.Println()
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "N↔M\tcharms\tunits\treconcile calls\told hook executions\ttime to fixed point\tnote")
	for _, r := range results {
		hooks := "-"
		if r.flavour == "classic" {
			hooks = strconv.Itoa(r.hooks)
		}
		took := r.took.Round(10 * time.Millisecond).String()
		if !r.converged {
			took = "> " + took
		}
		note := strings.ReplaceAll(r.note, "\n", " ")
		if len(note) > 100 {
			note = note[:97] + "..."
		}
		fmt.Fprintf(tw, "%d↔%d\t%s\t%d\t%d\t%s\t%s\t%s\n", r.n, r.n, r.flavour, r.units, r.reconciles, hooks, took, note)
	}
	tw.Flush()
	return ctx.Err()
}

func (r result) summary() string {
	s := fmt.Sprintf("%d reconcile calls", r.reconciles)
	if r.flavour == "classic" {
		s += fmt.Sprintf(", %d old hook executions", r.hooks)
	}
	if r.converged {
		s += fmt.Sprintf(", fixed point after %s", r.took.Round(10*time.Millisecond))
	}
	if r.note != "" {
		s += " (" + r.note + ")"
	}
	return s
}

// repoRoot finds the module's root from the working directory up.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(data), "module github.com/fixpoint/fixpoint\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run me inside the fixpoint repository (no go.mod of github.com/fixpoint/fixpoint above the working directory)")
		}
		dir = parent
	}
}

type bench struct {
	bin, charms, tmp string
	timeout          time.Duration
}

// env is the N↔N environment with the charms of flavour; peer relations
// (cluster) come with the charms.
func (b *bench) env(n int, flavour string) string {
	prefix := ""
	if flavour == "classic" {
		prefix = "classic-"
	}
	return fmt.Sprintf(`apiVersion: "fixpoint/v1"
name: "bench-%d"
services: {
	db: {charm: %q, units: %d}
	web: {charm: %q, units: %d}
}
relations: "web-db": ["web:db", "db:db"]
`, n, filepath.Join(b.charms, prefix+"db"), n, filepath.Join(b.charms, prefix+"web"), n)
}

// once runs one environment on a fresh `up` and measures it.
func (b *bench) once(ctx context.Context, n int, flavour string) (result, error) {
	r := result{n: n, flavour: flavour, units: 2 * n}
	dir := filepath.Join(b.tmp, fmt.Sprintf("%s-%d", flavour, n))
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		return r, err
	}
	envFile := filepath.Join(dir, "env.cue")
	if err := os.WriteFile(envFile, []byte(b.env(n, flavour)), 0o644); err != nil {
		return r, err
	}
	logFile, err := os.Create(filepath.Join(dir, "up.log"))
	if err != nil {
		return r, err
	}
	defer logFile.Close()

	up := exec.Command(b.bin, "up", "-f", envFile, "--data-dir", data, "--log-level", "error")
	up.Stderr = logFile
	stdout, err := up.StdoutPipe()
	if err != nil {
		return r, err
	}
	if err := up.Start(); err != nil {
		return r, err
	}
	exited := make(chan error, 1)
	applied := make(chan time.Time, 1)
	go func() {
		// The clock starts when the environment is applied: after the
		// control plane started and the charms were packed.
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			fmt.Fprintln(logFile, sc.Text())
			if strings.HasPrefix(sc.Text(), "applied at index ") {
				select {
				case applied <- time.Now():
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		exited <- up.Wait()
	}()
	defer stopUp(up, exited)

	var start time.Time
	select {
	case start = <-applied:
	case err := <-exited:
		exited <- err
		return r, fmt.Errorf("up exited before applying the environment (%v); see %s", err, logFile.Name())
	case <-time.After(b.timeout + 2*time.Minute):
		return r, fmt.Errorf("up did not apply the environment; see %s", logFile.Name())
	case <-ctx.Done():
		return r, ctx.Err()
	}
	// up publishes controller.json right after it applied. The bench
	// polls status rather than running `fixpoint wait`: wait long-polls on
	// the state's index, and the last units may settle without the index
	// moving, which wait notices only when its poll times out.
	if err := waitFile(ctx, filepath.Join(data, "controller.json"), time.Minute); err != nil {
		return r, err
	}
	var st *status
	for {
		st, err = b.status(ctx, data)
		if err != nil {
			return r, err
		}
		r.took = time.Since(start)
		if st.Converged {
			r.converged = true
			break
		}
		// A unit in error stops the run, unless the engine declared it
		// diverging: an operator would run `resolved` on a unit that
		// only reconciled often while its peers arrived, and so does
		// the bench, saying how often.
		failed := ""
		for name, u := range st.Units {
			if u.Phase != "error" {
				continue
			}
			if !strings.HasPrefix(u.Error, "diverged:") {
				failed = fmt.Sprintf("stopped: unit %s is in error: %s", name, u.Error)
				break
			}
			res := exec.CommandContext(ctx, b.bin, "resolved", name, "--data-dir", data)
			if out, err := res.CombinedOutput(); err != nil && !strings.Contains(string(out), "not in error") {
				return r, fmt.Errorf("resolved %s: %v\n%s", name, err, out)
			}
			r.resolved++
		}
		if failed != "" {
			r.note = failed
			break
		}
		if r.took >= b.timeout {
			r.note = fmt.Sprintf("stopped: no fixed point after %s", b.timeout)
			break
		}
		// Fine-grained while a run may still be short; a long run is
		// measured in minutes anyway.
		interval := 200 * time.Millisecond
		if r.took > 20*time.Second {
			interval = time.Second
		}
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-time.After(interval):
		}
	}
	if r.resolved > 0 {
		if r.note != "" {
			r.note += "; "
		}
		r.note += fmt.Sprintf("%d \"diverged\" verdicts resolved", r.resolved)
	}

	settled := 0
	for _, u := range st.Units {
		r.reconciles += u.Reconciles
		if u.Phase == "settled" {
			settled++
		}
	}
	if !r.converged {
		r.note = strings.Replace(r.note, "stopped: ", fmt.Sprintf("stopped with %d of %d units settled: ", settled, len(st.Units)), 1)
	}
	if flavour == "classic" {
		if r.hooks, err = countHooks(filepath.Join(data, "agent", "units")); err != nil {
			return r, err
		}
	}
	return r, nil
}

// status is the part of `status --format json` the bench reads.
type status struct {
	Converged bool `json:"converged"`
	Units     map[string]struct {
		Phase      string `json:"phase"`
		Error      string `json:"error"`
		Reconciles int    `json:"reconciles"`
	} `json:"units"`
}

func (b *bench) status(ctx context.Context, data string) (*status, error) {
	out, err := exec.CommandContext(ctx, b.bin, "status", "--format", "json", "--data-dir", data).Output()
	if err != nil {
		return nil, fmt.Errorf("status: %v", err)
	}
	var st status
	if err := json.Unmarshal(out, &st); err != nil {
		return nil, fmt.Errorf("status JSON: %v", err)
	}
	return &st, nil
}

// countHooks counts the lines of every unit's hooks.log: one per old hook
// the classic charms ran.
func countHooks(unitsDir string) (int, error) {
	logs, err := filepath.Glob(filepath.Join(unitsDir, "*", "hooks.log"))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, l := range logs {
		data, err := os.ReadFile(l)
		if err != nil {
			return 0, err
		}
		n += strings.Count(string(data), "\n")
	}
	return n, nil
}

// stopUp stops up with SIGTERM, as a user would, and kills it if it does
// not stop.
func stopUp(up *exec.Cmd, exited chan error) {
	_ = up.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		_ = up.Process.Kill()
		<-exited
	}
}

// waitFile polls for path until it exists or d passes.
func waitFile(ctx context.Context, path string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not appear within %s", path, d)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
