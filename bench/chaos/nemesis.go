package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"time"
)

// The faults, one at a time, each undone before the next.
const (
	faultKillServer = "kill-server"
	faultKillAgent  = "kill-agent"
	faultPause      = "pause-server"
	faultDisk       = "disk-full"
	faultPartition  = "partition"
	// faultOtherBuild restarts a server on the other build: the previous
	// release if it runs this one, and back.
	faultOtherBuild = "other-build"
)

// nemesis injects faults at random and undoes them.
type nemesis struct {
	c   *cluster
	rng *rand.Rand
	out io.Writer
	t0  time.Time
	// gap is the longest quiet time between two faults; hold the longest
	// a fault lasts (each at least a second).
	gap, hold time.Duration

	kinds   []string          // the faults that can run
	skipped map[string]string // the others, with why
	counts  map[string]int

	restarts       int
	restartsFailed int
	selfExits      int
	failures       []string
}

func newNemesis(c *cluster, seed uint64, out io.Writer, gap, hold time.Duration) *nemesis {
	n := &nemesis{c: c, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), out: out, t0: time.Now(),
		gap: gap, hold: hold, skipped: map[string]string{}, counts: map[string]int{}}
	n.kinds = []string{faultKillServer, faultKillAgent, faultPause}
	if c.diskOff == "" {
		n.kinds = append(n.kinds, faultDisk)
	} else {
		n.skipped[faultDisk] = c.diskOff
	}
	if c.nw.off == "" {
		n.kinds = append(n.kinds, faultPartition)
	} else {
		n.skipped[faultPartition] = c.nw.off
	}
	if c.prevOff == "" {
		n.kinds = append(n.kinds, faultOtherBuild)
	} else {
		n.skipped[faultOtherBuild] = c.prevOff
	}
	return n
}

func (n *nemesis) logf(format string, args ...any) {
	fmt.Fprintf(n.out, "%6.1fs  %s\n", time.Since(n.t0).Seconds(), fmt.Sprintf(format, args...))
}

// between is a random duration in [lo, hi].
func (n *nemesis) between(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(n.rng.Int64N(int64(hi-lo)))
}

// run injects faults until until, every kind once per round in a random
// order, so that a short run still has a few of each.
func (n *nemesis) run(ctx context.Context, until time.Time) {
	for ctx.Err() == nil && time.Now().Before(until) {
		order := append([]string(nil), n.kinds...)
		n.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, kind := range order {
			if ctx.Err() != nil || !time.Now().Before(until) {
				return
			}
			n.inject(ctx, kind)
			n.ensureUp(ctx)
			_ = sleep(ctx, n.between(time.Second/2, n.gap))
		}
	}
}

// target picks a server, the leader half the time.
func (n *nemesis) target(ctx context.Context) (int, string) {
	if n.rng.IntN(2) == 0 {
		for i := range n.c.servers {
			if st, err := n.c.status(ctx, i); err == nil && st.Role == "leader" {
				return i, " (leader)"
			}
		}
	}
	return n.rng.IntN(len(n.c.servers)), ""
}

// inject runs one fault of kind and undoes it.
func (n *nemesis) inject(ctx context.Context, kind string) {
	hold := n.between(time.Second, n.hold)
	n.counts[kind]++
	switch kind {
	case faultKillServer:
		i, what := n.target(ctx)
		s := n.c.servers[i]
		n.logf("kill -9 %s%s for %s", s.id, what, hold.Round(time.Millisecond))
		s.kill9()
		_ = sleep(ctx, hold)
		n.restartServer(ctx, i)
	case faultKillAgent:
		a := n.c.agents[n.rng.IntN(len(n.c.agents))]
		n.logf("kill -9 agent %s for %s", a.name, hold.Round(time.Millisecond))
		a.kill9()
		_ = sleep(ctx, hold)
		n.restartAgent(ctx, a)
	case faultPause:
		i, what := n.target(ctx)
		s := n.c.servers[i]
		hold += 2 * time.Second // past an election timeout
		n.logf("SIGSTOP %s%s for %s", s.id, what, hold.Round(time.Millisecond))
		if err := s.pause(); err != nil {
			n.logf("  %v", err)
		}
		_ = sleep(ctx, hold)
		s.resume()
	case faultDisk:
		i, what := n.target(ctx)
		s := n.c.servers[i]
		filled, err := fill(s)
		n.logf("fill %s's disk%s (%d MiB) for %s", s.id, what, filled>>20, hold.Round(time.Millisecond))
		if err != nil {
			n.logf("  %v", err)
		}
		// The log's segments are allocated ahead, so appends meet the
		// full disk only at a new segment; a snapshot meets it now.
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err = n.c.call(sctx, i, http.MethodPost, "/v1/raft/snapshot", nil, nil, nil)
		cancel()
		n.logf("  snapshot on the full disk: %v", errOrOK(err))
		_ = sleep(ctx, hold)
		if err := free(s); err != nil {
			n.logf("  %v", err)
		}
	case faultOtherBuild:
		i, what := n.target(ctx)
		s := n.c.servers[i]
		s.bin = n.c.otherBuild(s.bin)
		n.logf("stop %s%s and start it on %s", s.id, what, n.c.buildName(s.bin))
		s.stop(10 * time.Second)
		n.restartServer(ctx, i)
	case faultPartition:
		i, what := n.target(ctx)
		s := n.c.servers[i]
		n.logf("partition %s%s for %s", s.id, what, hold.Round(time.Millisecond))
		if err := n.c.nw.partition(i); err != nil {
			n.logf("  %v", err)
		}
		_ = sleep(ctx, hold)
		if err := n.c.nw.heal(i); err != nil {
			n.logf("  %v", err)
		}
	}
}

// restartServer starts server i again and waits for it to answer.
func (n *nemesis) restartServer(ctx context.Context, i int) {
	s := n.c.servers[i]
	n.restarts++
	err := s.start()
	if err == nil {
		err = n.c.waitServing(ctx, i, time.Minute)
	}
	if err != nil && ctx.Err() == nil {
		n.fail(fmt.Sprintf("restart %s: %v%s", s.id, err, tail(s.log)))
	}
}

// restartAgent starts agent a again; it must still run a moment later.
func (n *nemesis) restartAgent(ctx context.Context, a *proc) {
	n.restarts++
	err := a.start()
	if err == nil {
		_ = sleep(ctx, time.Second)
		if !a.alive() {
			err = fmt.Errorf("exited (%s)", a.exited())
		}
	}
	if err != nil && ctx.Err() == nil {
		n.fail(fmt.Sprintf("restart agent %s: %v%s", a.name, err, tail(a.log)))
	}
}

func (n *nemesis) fail(msg string) {
	n.restartsFailed++
	n.failures = append(n.failures, msg)
	n.logf("FAILED: %s", msg)
}

// ensureUp restarts whatever exited without the nemesis killing it (a
// server that gave up on a full disk, say): counted as self-exits.
func (n *nemesis) ensureUp(ctx context.Context) {
	for i, s := range n.c.servers {
		if !s.alive() && ctx.Err() == nil {
			n.selfExits++
			n.logf("%s exited by itself (%s); restarting it%s", s.id, s.exited(), tail(s.log))
			n.restartServer(ctx, i)
		}
	}
	for _, a := range n.c.agents {
		if !a.alive() && ctx.Err() == nil {
			n.selfExits++
			n.logf("agent %s exited by itself (%s); restarting it%s", a.name, a.exited(), tail(a.log))
			n.restartAgent(ctx, a)
		}
	}
}

// heal undoes every fault: continues paused servers, frees disks, joins
// partitions and starts whatever is down.
func (n *nemesis) heal(ctx context.Context) {
	for i, s := range n.c.servers {
		s.resume()
		if s.mounted {
			_ = free(s)
		}
		if n.c.nw.off == "" {
			_ = n.c.nw.heal(i)
		}
	}
	n.ensureUp(ctx)
}

// errOrOK prints an error, or "ok" for none.
func errOrOK(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// tail is the last lines of a log, indented, for a failure's message.
func tail(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > 6 {
		lines = lines[len(lines)-6:]
	}
	return "\n      | " + strings.Join(lines, "\n      | ")
}
