// Command logflood measures what an agent flooding the debug log costs a
// three-node control plane: one machine's agent posts batches as large as
// a command takes (model.MaxLogBatch lines of the longest kept) to every node at
// once, as fast as the nodes answer, while a writer beside it renews
// another machine's registration (one Raft entry each) through the
// leader. It runs the writer alone, then beside the flood, and prints
// both rates, their ratio, how much each node's raft directory grew during
// the flood, and how many flood lines the leader dropped over the
// machine's budget (raftstore.LogBudget, the servers' --agent-log-*
// flags). The last line is one JSON object.
//
//	go run ./bench/logflood -seconds 10
//	go run ./bench/logflood -bin /tmp/old/fixpoint   # a build without the budget
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fixpoint/fixpoint/bench/internal/proc"
	"github.com/fixpoint/fixpoint/bench/internal/servers"
	"github.com/fixpoint/fixpoint/raftstore"
)

type result struct {
	Seconds         float64   `json:"seconds"`
	QuietWritesPerS float64   `json:"quiet_writes_per_s"`
	FloodWritesPerS float64   `json:"flood_writes_per_s"`
	Ratio           float64   `json:"flood_over_quiet"`
	WriterErrors    int       `json:"writer_errors"`
	FloodPostedMiB  float64   `json:"flood_posted_mib"`
	FloodDropped    int       `json:"flood_lines_dropped"`
	RaftGrowthMiB   []float64 `json:"raft_growth_mib"`
	RaftEntries     uint64    `json:"raft_entries"`
	BudgetMiB       float64   `json:"budget_mib"`
}

func main() {
	seconds := flag.Int("seconds", 10, "how long each phase runs")
	bin := flag.String("bin", "", "the fixpoint binary to run (default: built from this checkout)")
	flag.Parse()
	root, err := os.MkdirTemp("", "logflood-")
	if err != nil {
		fail("%v", err)
	}
	defer os.RemoveAll(root)
	if *bin == "" {
		repo, err := proc.RepoRoot()
		if err != nil {
			fail("%v", err)
		}
		*bin = filepath.Join(root, "fixpoint")
		build := exec.Command("go", "build", "-o", *bin, "./cmd/fixpoint")
		build.Dir, build.Stdout, build.Stderr = repo, os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fail("build: %v", err)
		}
	}
	c, err := servers.Start(*bin, root, client, nil)
	defer c.Stop()
	if err != nil {
		fail("%v", err)
	}
	lead, err := leader(c)
	if err != nil {
		fail("%v", err)
	}
	writer, err := register(lead, c.Token, "mw")
	if err != nil {
		fail("%v", err)
	}
	flooder, err := register(lead, c.Token, "mflood")
	if err != nil {
		fail("%v", err)
	}
	d := time.Duration(*seconds) * time.Second
	var seq atomic.Int64

	quiet, qerr := write(lead, writer, d, &seq)
	before, firstIndex := raftSizes(c), lastIndex(c, lead)
	ctx, cancel := context.WithCancel(context.Background())
	var posted, dropped atomic.Int64
	var wg sync.WaitGroup
	for _, s := range c.Servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			flood(ctx, s.Addr, flooder, &posted, &dropped)
		}()
	}
	start := time.Now()
	loud, lerr := write(lead, writer, d, &seq)
	cancel()
	wg.Wait()
	elapsed := time.Since(start)
	after := raftSizes(c)
	entries := lastIndex(c, lead) - firstIndex

	r := result{
		Seconds:         elapsed.Seconds(),
		QuietWritesPerS: float64(quiet) / d.Seconds(),
		FloodWritesPerS: float64(loud) / d.Seconds(),
		WriterErrors:    qerr + lerr,
		FloodPostedMiB:  float64(posted.Load()) / (1 << 20),
		FloodDropped:    int(dropped.Load()),
		RaftEntries:     entries,
		// The default budget: one batch's worth, then its rate.
		BudgetMiB: (float64(raftstore.DefaultLogBudget.BatchBytes) + float64(raftstore.DefaultLogBudget.BytesPerSecond)*elapsed.Seconds()) / (1 << 20),
	}
	if r.QuietWritesPerS > 0 {
		r.Ratio = r.FloodWritesPerS / r.QuietWritesPerS
	}
	fmt.Printf("%-28s %10s\n", "", "value")
	fmt.Printf("%-28s %10.1f\n", "writes/s, writer alone", r.QuietWritesPerS)
	fmt.Printf("%-28s %10.1f\n", "writes/s, beside the flood", r.FloodWritesPerS)
	fmt.Printf("%-28s %10.2f\n", "ratio", r.Ratio)
	fmt.Printf("%-28s %10.1f\n", "flood posted (MiB)", r.FloodPostedMiB)
	fmt.Printf("%-28s %10d\n", "flood lines dropped", r.FloodDropped)
	for i := range after {
		g := float64(after[i]-before[i]) / (1 << 20)
		r.RaftGrowthMiB = append(r.RaftGrowthMiB, g)
		fmt.Printf("%-28s %10.1f\n", fmt.Sprintf("n%d raft dir growth (MiB)", i+1), g)
	}
	fmt.Printf("%-28s %10d\n", "raft entries in the flood", r.RaftEntries)
	fmt.Printf("%-28s %10.1f\n", "budget over the flood (MiB)", r.BudgetMiB)
	out, _ := json.Marshal(r)
	fmt.Println(string(out))
}

// agent is a registered machine and its credential.
type agent struct{ machine, token string }

func register(addr, token, machine string) (agent, error) {
	data, err := post(addr+"/v1/agent/register", token, fmt.Sprintf(`{"machine":%q,"address":"10.254.0.1"}`, machine))
	if err != nil {
		return agent{}, fmt.Errorf("register %s: %w", machine, err)
	}
	var reg struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(data, &reg); err != nil || reg.Token == "" {
		return agent{}, fmt.Errorf("register %s: no credential in %q", machine, data)
	}
	return agent{machine: machine, token: reg.Token}, nil
}

// write renews a's registration under a new address through addr, one
// request at a time, for d; it returns the renewals done and failed.
func write(addr string, a agent, d time.Duration, seq *atomic.Int64) (ok, failed int) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		i := seq.Add(1)
		body := fmt.Sprintf(`{"machine":%q,"address":"10.%d.%d.%d"}`, a.machine, i/62500%250, i/250%250, i%250)
		if _, err := post(addr+"/v1/agent/register", a.token, body); err != nil {
			failed++
			continue
		}
		ok++
	}
	return ok, failed
}

// flood posts a's largest batches to addr until ctx ends.
func flood(ctx context.Context, addr string, a agent, posted, dropped *atomic.Int64) {
	msg := strings.Repeat("x", 2048)
	for ctx.Err() == nil {
		var b strings.Builder
		b.WriteString(`{"lines":[`)
		now := time.Now().UnixNano()
		for i := range 512 {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"time":%d,"machine":%q,"level":"info","origin":"agent","message":%q}`, now+int64(i), a.machine, msg)
		}
		b.WriteString(`]}`)
		data, err := post(addr+"/v1/agent/logs?machine="+a.machine, a.token, b.String())
		if err != nil {
			continue
		}
		posted.Add(int64(b.Len()))
		var ans struct {
			Dropped int `json:"dropped"`
		}
		if json.Unmarshal(data, &ans) == nil {
			dropped.Add(int64(ans.Dropped))
		}
	}
}

var client = &http.Client{Timeout: time.Minute}

func post(url, token, body string) ([]byte, error) {
	return servers.Do(client, http.MethodPost, url, token, body)
}

// leader is the leader's API address.
func leader(c *servers.Cluster) (string, error) {
	s, err := c.Pick("leader")
	if err != nil {
		return "", err
	}
	return s.Addr, nil
}

// lastIndex is the last index of addr's log (GET /v1/raft/status).
func lastIndex(c *servers.Cluster, addr string) uint64 {
	var st struct {
		LastIndex uint64 `json:"last_index"`
	}
	if data, err := c.Get(addr + "/v1/raft/status"); err == nil {
		_ = json.Unmarshal(data, &st)
	}
	return st.LastIndex
}

// raftSizes is the bytes under each node's raft directory: the log's
// segment files grow a whole segment at a time.
func raftSizes(c *servers.Cluster) []int64 {
	out := make([]int64, len(c.Servers))
	for i, s := range c.Servers {
		_ = filepath.WalkDir(filepath.Join(s.Dir, "raft"), func(_ string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if fi, err := d.Info(); err == nil {
					out[i] += fi.Size()
				}
			}
			return nil
		})
	}
	return out
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "logflood: "+format+"\n", args...)
	os.Exit(1)
}
