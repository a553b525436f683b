package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/api"
)

type bench struct {
	bin, charms, tmp string
	probeCharm       string
	// opsCharms holds ops-db and ops-web packed with the ops framework,
	// when the ops flavour runs.
	opsCharms string
	cfg       config
	runs      int // runs started, for their directories' names
}

// probeService is the service of the probe environment, run before each
// old-hook run to time tool calls against /bin/true.
const probeService = "probe"

// env is the N↔N environment with the charms of flavour; peer relations
// (cluster) come with the charms. Flavour probeService is the probe unit
// alone.
func (b *bench) env(n int, flavour string) string {
	prefix := ""
	switch flavour {
	case probeService:
		return fmt.Sprintf(`apiVersion: "fixpoint/v1"
name: "bench-probe"
services: %s: {charm: %q, units: 1}
`, probeService, b.probeCharm)
	case "classic", classicSystem:
		prefix = "classic-"
	case "ops":
		// The ops charms' own names: their metadata names them so.
		return fmt.Sprintf(`apiVersion: "fixpoint/v1"
name: "bench-%d"
services: {
	"ops-db": {charm: %q, units: %d}
	"ops-web": {charm: %q, units: %d}
}
relations: "web-db": ["ops-web:db", "ops-db:db"]
`, n, filepath.Join(b.opsCharms, "ops-db"), n, filepath.Join(b.opsCharms, "ops-web"), n)
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

// classicSystem is the classic flavour with every hook run by the
// system shell (--hook-shell system), each tool call a process, as before
// fixpoint-sh; "classic" runs them in fixpoint-sh, up's default.
const classicSystem = "classic-system"

// hookShell is the --hook-shell a flavour runs with.
func hookShell(flavour string) string {
	if flavour == classicSystem {
		return "system"
	}
	return "builtin"
}

// once runs one environment on a fresh `up` with --hook-shell shell and
// measures it.
func (b *bench) once(ctx context.Context, n int, flavour, shell string) (result, error) {
	r := result{N: n, Flavour: flavour, Units: 2 * n}
	if flavour == probeService {
		r.Units = 1
	}
	// A probe runs before each old-hook flavour: each run its own dir.
	b.runs++
	dir := filepath.Join(b.tmp, fmt.Sprintf("%s-%d-%d", flavour, n, b.runs))
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

	// Debug, for the agent's "old hooks ran" lines that carry tool calls.
	up := exec.Command(b.bin, "up", "-f", envFile, "--data-dir", data, "--log-level", "debug", "--hook-shell", shell)
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
	// Stopped once: explicitly after the run, for its CPU time, or on
	// an early return.
	stop := sync.OnceValue(func() time.Duration { return stopUp(up, exited) })
	defer stop()

	var start time.Time
	select {
	case start = <-applied:
	case err := <-exited:
		exited <- err
		return r, fmt.Errorf("up exited before applying the environment (%v); see %s", err, logFile.Name())
	case <-time.After(b.cfg.timeout + 2*time.Minute):
		return r, fmt.Errorf("up did not apply the environment; see %s", logFile.Name())
	case <-ctx.Done():
		return r, ctx.Err()
	}
	// up publishes controller.json right after it applied; from there the
	// bench follows the status summary as `fixpoint wait` does
	// (api.Client.Follow), sampling the load at every change.
	if err := waitFile(ctx, filepath.Join(data, "controller.json"), time.Minute); err != nil {
		return r, err
	}
	c, err := b.client(data)
	if err != nil {
		return r, err
	}
	var loadSum float64
	var loadN int
	var followErr error
	followCtx, cancel := context.WithDeadline(ctx, start.Add(b.cfg.timeout))
	c.Follow(followCtx, false, nil, func(_, sum *engine.Summary) {
		if l, err := loadAvg(); err == nil {
			loadSum += l
			loadN++
		}
		r.took = time.Since(start)
		if sum.Converged {
			r.Converged = true
			cancel()
			return
		}
		// A unit in error stops the run, unless the engine declared it
		// diverging: an operator would run `resolved` on a unit that
		// only reconciled often while its peers arrived, and so does
		// the bench, saying how often.
		for _, e := range sum.Errors {
			if !strings.HasPrefix(e.Message, "diverged:") {
				r.Note = fmt.Sprintf("stopped: unit %s is in error: %s", e.Unit, e.Message)
				cancel()
				return
			}
			res := exec.CommandContext(ctx, b.bin, "resolved", e.Unit, "--data-dir", data)
			if out, err := res.CombinedOutput(); err != nil && !strings.Contains(string(out), "not in error") {
				followErr = fmt.Errorf("resolved %s: %v\n%s", e.Unit, err, out)
				cancel()
				return
			}
			r.Resolved++
		}
	})
	cancel()
	switch {
	case followErr != nil:
		return r, followErr
	case ctx.Err() != nil:
		return r, ctx.Err()
	case !r.Converged && r.Note == "":
		r.took = time.Since(start)
		r.Note = fmt.Sprintf("stopped: no fixed point after %s", b.cfg.timeout)
	}
	st, err := c.Status(ctx, false, 0, 0)
	if err != nil {
		return r, fmt.Errorf("status: %v", err)
	}
	r.Seconds = r.took.Seconds()
	r.CPUSeconds = stop().Seconds()
	if loadN > 0 {
		r.Load = loadSum / float64(loadN)
	}
	if r.Resolved > 0 {
		if r.Note != "" {
			r.Note += "; "
		}
		r.Note += fmt.Sprintf("%d \"diverged\" verdicts resolved", r.Resolved)
	}

	settled, units := 0, 0
	for _, u := range st.Units {
		units++
		r.Reconciles += u.Reconciles
		if u.Phase == engine.Settled {
			settled++
		}
	}
	if !r.Converged {
		r.Note = strings.Replace(r.Note, "stopped: ", fmt.Sprintf("stopped with %d of %d units settled: ", settled, units), 1)
	}
	switch flavour {
	case "classic", classicSystem:
		if r.Hooks, err = countHooks(filepath.Join(data, "agent", "units")); err != nil {
			return r, err
		}
		if _, r.ToolCalls, err = countOldHookRuns(logFile.Name()); err != nil {
			return r, err
		}
	case "ops":
		// The ops charms keep no hooks.log: the agent's lines count the
		// dispatches.
		if r.Hooks, r.ToolCalls, err = countOldHookRuns(logFile.Name()); err != nil {
			return r, err
		}
	case probeService:
		if !r.Converged {
			return r, fmt.Errorf("the probe unit did not finish: %s; see %s", r.Note, logFile.Name())
		}
		if r.Probe, err = readProbe(filepath.Join(data, "agent")); err != nil {
			return r, err
		}
		r.Probe.Shell = shell
	}
	return r, nil
}

// client is an API client of the up whose data dir is data, as it
// published itself in controller.json.
func (b *bench) client(data string) (*api.Client, error) {
	raw, err := os.ReadFile(filepath.Join(data, "controller.json"))
	if err != nil {
		return nil, fmt.Errorf("status: %v", err)
	}
	var ep struct {
		Addr  string `json:"addr"`
		Token string `json:"token"`
		CA    string `json:"ca"`
	}
	if err := json.Unmarshal(raw, &ep); err != nil {
		return nil, fmt.Errorf("status: controller.json: %v", err)
	}
	hc := &http.Client{Timeout: time.Minute}
	if ep.CA != "" {
		pem, err := os.ReadFile(ep.CA)
		if err != nil {
			return nil, fmt.Errorf("status: CA: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("status: no certificate in %s", ep.CA)
		}
		hc.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	}
	return api.NewClient(strings.Split(ep.Addr, ","), ep.Token, hc), nil
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
// not stop. It returns the CPU time (user and system) of up and of every
// process it ran and reaped: hooks, hook tools, charm builds.
func stopUp(up *exec.Cmd, exited chan error) time.Duration {
	_ = up.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		_ = up.Process.Kill()
		<-exited
	}
	if up.ProcessState == nil {
		return 0
	}
	return up.ProcessState.UserTime() + up.ProcessState.SystemTime()
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

// countOldHookRuns sums the hooks and tool_calls of the agent's "old
// hooks ran" lines in up's log.
func countOldHookRuns(log string) (hooks, tools int, err error) {
	f, err := os.Open(log)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, "old hooks ran") {
			continue
		}
		for _, kv := range []struct {
			key string
			sum *int
		}{{" hooks=", &hooks}, {"tool_calls=", &tools}} {
			_, v, ok := strings.Cut(line, kv.key)
			if !ok {
				continue
			}
			v, _, _ = strings.Cut(v, " ")
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return 0, 0, fmt.Errorf("%s: bad %s in %q", log, strings.TrimSpace(kv.key), line)
			}
			*kv.sum += n
		}
	}
	return hooks, tools, sc.Err()
}

// loadAvg is the 1-minute load average.
func loadAvg() (float64, error) {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, err
	}
	f, _, _ := strings.Cut(string(data), " ")
	return strconv.ParseFloat(f, 64)
}
