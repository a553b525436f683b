package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fixpoint/fixpoint/bench/internal/servers"
	"github.com/fixpoint/fixpoint/bench/internal/simagent"
)

// envFigures are one environment's series on the leader's /metrics.
type envFigures struct {
	converged, settled, rebuilt, woken float64
}

// scrape reads every environment's series but the default one's (which
// carry no env label) from s's /metrics.
func scrape(cl *servers.Cluster, s *servers.Server) (map[string]*envFigures, error) {
	body, err := cl.Get(url(s, "/metrics"))
	if err != nil {
		return nil, fmt.Errorf("metrics of %s: %w", s.ID, err)
	}
	out := map[string]*envFigures{}
	for _, line := range strings.Split(string(body), "\n") {
		name, rest, ok := strings.Cut(line, `{env="`)
		if !ok {
			continue
		}
		env, rest, ok := strings.Cut(rest, `"`)
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			continue
		}
		f := out[env]
		if f == nil {
			f = &envFigures{}
			out[env] = f
		}
		switch {
		case name == "fixpoint_converged":
			f.converged = v
		case name == "fixpoint_units" && labels == `,phase="settled"`:
			f.settled = v
		case name == "fixpoint_universes_rebuilt_total":
			f.rebuilt = v
		case name == "fixpoint_work_polls_woken_total":
			f.woken = v
		}
	}
	return out, nil
}

// waitFixed waits until the leader says every one of names is converged
// with all its units settled, and returns that leader. The leader is
// asked anew each time: on a loaded machine an election may move it, and
// only the leader's controllers run.
func waitFixed(cl *servers.Cluster, names []string, units int, timeout time.Duration) (*servers.Server, error) {
	deadline := time.Now().Add(timeout)
	last := "no scrape yet"
	for time.Now().Before(deadline) {
		leader, err := cl.Pick("leader")
		var figs map[string]*envFigures
		if err == nil {
			figs, err = scrape(cl, leader)
		}
		if err != nil {
			last = err.Error()
		} else if missing := unfixed(figs, names, units); len(missing) == 0 {
			return leader, nil
		} else {
			last = fmt.Sprintf("%d environments not at their fixed point, such as %s", len(missing), missing[0])
		}
		time.Sleep(time.Second)
	}
	return nil, fmt.Errorf("no fixed point within %s: %s", timeout, last)
}

// unfixed are the environments of names not converged with every unit
// settled, each with what the leader says of it.
func unfixed(figs map[string]*envFigures, names []string, units int) []string {
	var out []string
	for _, n := range names {
		f := figs[n]
		if f == nil || f.converged != 1 || int(f.settled) != units {
			out = append(out, fmt.Sprintf("%s (%+v)", n, f))
		}
	}
	return out
}

// isolation is what one config edit of one environment cost each
// environment, from the leader's counters.
type isolation struct {
	Changed        string `json:"changed"`
	RebuiltChanged int64  `json:"rebuilt_changed"`
	WokenChanged   int64  `json:"woken_changed"`
	// RebuiltOthers and WokenOthers sum the other environments'; Touched
	// names those of them whose counters moved.
	RebuiltOthers int64    `json:"rebuilt_others"`
	WokenOthers   int64    `json:"woken_others"`
	Touched       []string `json:"touched,omitempty"`
	// LeaderMoved says an election moved the leader meanwhile: the
	// counters are each node's own, so the figures are then void.
	LeaderMoved bool `json:"leader_moved,omitempty"`
}

// isolate edits the first environment's db0 config, re-applies its file,
// waits for its fixed point past the change and counts, from the leader's
// counters, what it cost every environment. The counters are read again
// a few seconds after the fixed point so that late work is counted too.
func isolate(o opts, cl *servers.Cluster, leader *servers.Server, dir string, addrs []string, names []string, units int) *isolation {
	changed := names[0]
	before := must(scrape(cl, leader))
	file := filepath.Join(dir, changed+"-edit.cue")
	check(os.WriteFile(file, []byte(simagent.Environment(changed, o.root, units, map[string]any{"max_connections": 101})), 0o644))
	check(apply(o.bin, dir, addrs, cl.Token, file))
	deadline := time.Now().Add(o.timeout)
	for {
		figs := must(scrape(cl, leader))
		if len(unfixed(figs, []string{changed}, units)) == 0 && figs[changed].rebuilt > before[changed].rebuilt {
			break
		}
		if time.Now().After(deadline) {
			check(fmt.Errorf("%s: no fixed point after its config edit within %s", changed, o.timeout))
		}
		time.Sleep(500 * time.Millisecond)
	}
	time.Sleep(3 * time.Second)
	after := must(scrape(cl, leader))
	now, err := cl.Pick("leader")
	iso := &isolation{Changed: changed, LeaderMoved: err != nil || now != leader}
	for _, n := range names {
		b, a := before[n], after[n]
		if a == nil || b == nil {
			check(fmt.Errorf("environment %s has no series on the leader's /metrics", n))
		}
		rebuilt, woken := int64(a.rebuilt-b.rebuilt), int64(a.woken-b.woken)
		if n == changed {
			iso.RebuiltChanged, iso.WokenChanged = rebuilt, woken
			continue
		}
		iso.RebuiltOthers += rebuilt
		iso.WokenOthers += woken
		if rebuilt != 0 || woken != 0 {
			iso.Touched = append(iso.Touched, n)
		}
	}
	sort.Strings(iso.Touched)
	return iso
}

// startCPUProfile starts the leader's CPU profile of -cpuprofile-s
// seconds, if asked, and returns what waits for it to be written.
func startCPUProfile(o opts, cl *servers.Cluster, leader *servers.Server, kind string) func() {
	if o.cpuProfile == "" {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		what := fmt.Sprintf("/debug/pprof/profile?seconds=%d", int(o.cpuProfileFor.Seconds()))
		if err := saveProfile(cl, leader, what, o.cpuProfile+"."+kind); err != nil {
			fmt.Fprintln(os.Stderr, "envs:", err)
		}
	}()
	return func() { <-done }
}

// saveProfile writes the profile at what (a /debug/pprof path) of s to
// path.
func saveProfile(cl *servers.Cluster, s *servers.Server, what, path string) error {
	req, err := http.NewRequest(http.MethodGet, url(s, what), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+cl.Token)
	resp, err := cl.Client.Do(req)
	if err != nil {
		return fmt.Errorf("%s of %s: %w", what, s.ID, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s of %s: %s %v", what, s.ID, resp.Status, err)
	}
	return os.WriteFile(path, data, 0o600)
}

// url is s's URL of path.
func url(s *servers.Server, path string) string {
	if strings.Contains(s.Addr, "://") {
		return s.Addr + path
	}
	return "http://" + s.Addr + path
}
