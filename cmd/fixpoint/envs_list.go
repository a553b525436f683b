package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/api"
)

// envRow is one environment as `fixpoint envs` shows it: what the cluster
// says of it (GET /v1/envs) and its status summary, read through its own
// routes.
type envRow struct {
	api.EnvInfo
	Phases    *engine.PhaseCounts `json:"phases,omitempty"`
	Converged bool                `json:"converged"`
	// Summary is its status's first line, or why it could not be read.
	Summary string `json:"summary"`
}

// summaryReaders bounds the status summaries `fixpoint envs` reads at once.
const summaryReaders = 8

// envRows reads each environment's status summary, a few at a time.
func envRows(ctx context.Context, c *api.Client, envs []api.EnvInfo) []envRow {
	rows := make([]envRow, len(envs))
	slots := make(chan struct{}, summaryReaders)
	var wg sync.WaitGroup
	for i := range envs {
		rows[i].EnvInfo = envs[i]
		name := envs[i].Name
		if envs[i].Default {
			name = ""
		}
		wg.Add(1)
		slots <- struct{}{}
		go func(row *envRow, name string) {
			defer wg.Done()
			defer func() { <-slots }()
			sum, err := c.WithEnv(name).WaitSummary(ctx, false, nil, 0)
			if err != nil {
				row.Summary = "status unavailable: " + err.Error()
				return
			}
			row.Phases, row.Converged, row.Summary = &sum.Phases, sum.Converged, sum.Summary
		}(&rows[i], name)
	}
	wg.Wait()
	return rows
}

// printEnvRows prints `fixpoint envs` as a table, or as json or yaml.
func printEnvRows(w io.Writer, format string, rows []envRow) error {
	switch format {
	case "json":
		return writeJSONStatus(w, rows, false)
	case "yaml":
		return writeYAML(w, rows)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tUUID\tSERVICES\tUNITS\tPHASES\tCONVERGED")
	for _, e := range rows {
		name := envLabel(e.Name, e.Default)
		converged := "no"
		if e.Converged {
			converged = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", name, orDash(e.UUID), e.Services, e.Units, phaseWords(e.Phases, e.Summary), converged)
	}
	return tw.Flush()
}

// phaseWords is the units per phase, "3 settled, 1 error", or the
// summary's words when there are no counts.
func phaseWords(p *engine.PhaseCounts, summary string) string {
	if p == nil {
		return summary
	}
	var parts []string
	for _, c := range []struct {
		n    int
		name string
	}{{p.Pending, "pending"}, {p.Reconciling, "reconciling"}, {p.Settled, "settled"}, {p.Error, "error"}, {p.Lost, "lost"}, {p.Blocked, "blocked"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.name))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}
