// Package simagent is the benches' simulated agent: a machine's agent
// whose hooks are Go functions with the demo charms' logic, so that the
// control plane does all its real work and no process is spawned.
package simagent

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// Run is machine's agent until ctx ends. Its work polls (api.Client's
// Claim) say envs=1, as an agent that keeps each environment's units
// apart, so it is handed the work of every environment; each report
// names its work's environment. It heartbeats its running units, by
// unit key, as the real agent does, so that a poll answer lost on the
// way (held past the client's deadline on a loaded machine) is handed
// out again rather than stalling its waves.
func Run(ctx context.Context, c *api.Client, machine string) {
	var mu sync.Mutex
	running := []string{}
	go func() {
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			mu.Lock()
			now := running
			mu.Unlock()
			_, _ = c.Heartbeat(ctx, machine, now)
		}
	}()
	for ctx.Err() == nil {
		work, err := c.Claim(ctx, machine, 256, 5*time.Second)
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if len(work) == 0 {
			continue
		}
		units := make([]string, len(work))
		for i := range work {
			units[i] = work[i].Key()
		}
		mu.Lock()
		running = units
		mu.Unlock()
		reps := make([]wire.Report, len(work))
		for i, w := range work {
			out, _ := json.Marshal(Logic(w.Universe))
			reps[i] = wire.Report{Unit: w.Unit, Hash: w.Hash, Env: w.Env, Output: out}
		}
		for ctx.Err() == nil {
			if err := c.Report(ctx, machine, reps); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		mu.Lock()
		running = []string{}
		mu.Unlock()
	}
}

// Logic is the demo's db/web protocol: web asks for a database, db grants
// every client that asked, web connects once listed; both publish to their
// peers, and the db leader names itself primary.
func Logic(u *charmapi.Universe) *charmapi.Result {
	r := charmapi.NewResult()
	isDB := strings.HasPrefix(u.Service, "db")
	for _, rel := range u.Relations {
		switch {
		case rel.Name == "cluster":
			r.SetLocal(rel.Ident, map[string]string{"address": u.Address})
			if isDB && u.Leader {
				r.SetApp(rel.Ident, map[string]string{"primary": u.Unit})
			}
		case isDB:
			var asked []string
			for unit, s := range rel.Units {
				if s["database"] != "" {
					asked = append(asked, unit)
				}
			}
			sort.Slice(asked, func(i, j int) bool { return model.UnitLess(asked[i], asked[j]) })
			r.SetLocal(rel.Ident, map[string]string{"host": u.Address, "allowed-units": strings.Join(asked, " ")})
		default:
			r.SetLocal(rel.Ident, map[string]string{"database": "shop"})
			for _, s := range rel.Units {
				if strings.Contains(" "+s["allowed-units"]+" ", " "+u.Unit+" ") {
					return r.Active("connected")
				}
			}
		}
	}
	return r.Waiting("waiting for db access")
}

// Environment is the file of environment name: the demo's db and web
// charms under root in 50-unit services, db/web pairs related, as many
// pairs as make units (at least one); config, when set, is db0's.
func Environment(name, root string, units int, config map[string]any) string {
	pairs := max(units/100, 1)
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: \"fixpoint/v1\"\nname: %q\nservices: {\n", name)
	db, web := filepath.Join(root, "testdata/charms/db"), filepath.Join(root, "testdata/charms/web")
	for i := 0; i < pairs; i++ {
		cfg := ""
		if i == 0 && config != nil {
			raw, _ := json.Marshal(config)
			cfg = ", config: " + string(raw)
		}
		fmt.Fprintf(&b, "\tdb%d: {charm: %q, units: 50%s}\n\tweb%d: {charm: %q, units: 50}\n", i, db, cfg, i, web)
	}
	fmt.Fprintf(&b, "}\nrelations: {\n")
	for i := 0; i < pairs; i++ {
		fmt.Fprintf(&b, "\t\"r%d\": [\"web%d:db\", \"db%d:db\"]\n", i, i, i)
	}
	fmt.Fprintf(&b, "}\n")
	return b.String()
}
