package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/engine/charm"
	"github.com/fixpoint/fixpoint/model"
)

// brokenPosition matches the file:line:col (file:line for YAML syntax
// errors) that starts every line of a report.
var brokenPosition = regexp.MustCompile(`^[^: ]+\.(cue|yaml):\d+(:\d+)?: `)

// fixpointIn runs the binary to completion in dir.
func fixpointIn(t *testing.T, dir string, args ...string) run {
	t.Helper()
	return runFixpoint(t, time.Minute, dir, nil, args...)
}

// stateJSON is the replicated state as the control plane serves it.
func stateJSON(t *testing.T, data string) (*model.State, string) {
	t.Helper()
	st := stateOf(t, data)
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	return st, string(b)
}

// stateJSONBut is stateJSON with the state's index set to index, for
// comparing everything but the index.
func stateJSONBut(t *testing.T, data string, index uint64) (*model.State, string) {
	t.Helper()
	st := stateOf(t, data)
	at := st.Index
	st.Index = index
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	st.Index = at
	return st, string(b)
}

// reportLines returns the problem lines of a vet or apply report, without
// the "fixpoint: " the binary puts before an error and the summary line.
func reportLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		l = strings.TrimPrefix(l, "fixpoint: ")
		if strings.HasPrefix(l, "vet: ") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// TestBrokenEnvironmentsAgainstRunningUp runs vet and apply on every case
// of testdata/broken against one running up: both must fail with exactly
// the report in want.txt (every line at the file:line:col of the mistake),
// and the replicated state must be byte for byte what it was.
func TestBrokenEnvironmentsAgainstRunningUp(t *testing.T) {
	t.Parallel()
	root := repo("testdata", "broken")
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	var up *upProc
	t.Cleanup(func() {
		if t.Failed() && up != nil {
			t.Logf("up output:\n%s", up.out)
		}
	})
	up = startUp(t, data, repo("testdata", "lifecycle", "step1.cue"))
	up.waitConverged(t, converges)
	before, beforeJSON := stateJSON(t, data)
	if before.EnvIndex == 0 || len(before.Units) == 0 {
		t.Fatalf("up did not deploy its environment: env_index %d, %d units", before.EnvIndex, len(before.Units))
	}

	n := 0
	t.Run("cases", func(t *testing.T) {
		for _, e := range ents {
			if !e.IsDir() || e.Name() == "charms" {
				continue
			}
			n++
			dir := filepath.Join(root, e.Name())
			t.Run(e.Name(), func(t *testing.T) {
				t.Parallel()
				raw, err := os.ReadFile(filepath.Join(dir, "want.txt"))
				if err != nil {
					t.Fatal(err)
				}
				want := strings.Split(strings.TrimSpace(string(raw)), "\n")
				for _, l := range want {
					if !brokenPosition.MatchString(l) {
						t.Errorf("want.txt line lacks file:line:col: %s", l)
					}
				}
				check := func(what string, r run) {
					t.Helper()
					if r.code != exitFailed {
						t.Errorf("%s exited %d, want %d\nstdout:\n%s\nstderr:\n%s", what, r.code, exitFailed, r.stdout, r.stderr)
						return
					}
					got := reportLines(r.stderr)
					if strings.Join(got, "\n") != strings.Join(want, "\n") {
						t.Errorf("%s reports\n  %s\nwant.txt says\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
					}
				}
				check("vet", fixpointIn(t, dir, "vet", "env.cue"))
				check("plan", fixpointIn(t, dir, "plan", "-f", "env.cue", "--data-dir", data))
				check("apply", fixpointIn(t, dir, "apply", "-f", "env.cue", "--wait", "--timeout", "30s", "--data-dir", data))
				// The index alone may move: debug-log lines are entries too.
				if after, afterJSON := stateJSONBut(t, data, before.Index); afterJSON != beforeJSON {
					t.Errorf("the state changed: index %d -> %d, env_index %d -> %d", before.Index, after.Index, before.EnvIndex, after.EnvIndex)
				}
			})
		}
	})
	if n < 30 {
		t.Errorf("only %d broken cases; keep at least 30", n)
	}
	if after, afterJSON := stateJSONBut(t, data, before.Index); afterJSON != beforeJSON {
		t.Errorf("the state changed over all cases: index %d -> %d, env_index %d -> %d", before.Index, after.Index, before.EnvIndex, after.EnvIndex)
	}
	up.stop(t)
}

// TestControlPlaneRefusesBadDeploys sends broken environments straight to
// the control plane, past the CLI's own checks: it must check the JSON
// again, refuse with a message naming the field, and change nothing.
func TestControlPlaneRefusesBadDeploys(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	var up *upProc
	t.Cleanup(func() {
		if t.Failed() && up != nil {
			t.Logf("up output:\n%s", up.out)
		}
	})
	env := repo("testdata", "lifecycle", "step1.cue")
	up = startUp(t, data, env)
	up.waitConverged(t, converges)
	// The same environment, packed as apply packs it: its charms are the
	// ones up already uploaded.
	good, err := charm.CheckAndPack(filepath.Join(data, "cache"), env)
	if err != nil {
		t.Fatal(err)
	}
	before, beforeJSON := stateJSON(t, data)
	raw, err := os.ReadFile(filepath.Join(data, endpointFile))
	if err != nil {
		t.Fatal(err)
	}
	var ep endpoint
	if err := json.Unmarshal(raw, &ep); err != nil {
		t.Fatal(err)
	}
	client := api.NewClient([]string{ep.Addr}, ep.Token, nil)

	units := func(n int) *int { return &n }
	cases := []struct {
		name   string
		mutate func(d *model.Deploy)
		want   string
	}{
		{"negative units", func(d *model.Deploy) {
			s := d.Env.Services["store"]
			s.Units = units(-1)
			d.Env.Services["store"] = s
		}, "services.store.units: units is -1; it must be 0 or more"},
		{"unknown endpoint", func(d *model.Deploy) {
			d.Env.Relations["app-store"] = []string{"app:database", "store:data"}
		}, `relations.app-store: service app (charm app) has no endpoint "database"; it has: data, juju-info, mesh`},
		{"peer endpoint", func(d *model.Deploy) {
			d.Env.Relations["ring"] = []string{"store:ring", "app:mesh"}
		}, "relations.ring: endpoint store:ring is a peer endpoint"},
		{"config type", func(d *model.Deploy) {
			s := d.Env.Services["store"]
			s.Config = map[string]any{"size": "big"}
			d.Env.Services["store"] = s
		}, `services.store.config.size: option "size" of charm store is of type int`},
		{"unknown config key", func(d *model.Deploy) {
			s := d.Env.Services["app"]
			s.Config = map[string]any{"colour": "red"}
			d.Env.Services["app"] = s
		}, `services.app.config.colour: charm app has no option "colour" (it has: mode)`},
		{"subordinate alone", func(d *model.Deploy) {
			delete(d.Env.Relations, "app-tail")
		}, "services.tail: service tail is subordinate"},
		{"duplicate relation", func(d *model.Deploy) {
			d.Env.Relations["again"] = []string{"store:data", "app:data"}
		}, "already exists as"},
		{"unknown service", func(d *model.Deploy) {
			d.Env.Relations["nope"] = []string{"app:data", "ghost"}
		}, `unknown service "ghost"`},
		{"wrong apiVersion", func(d *model.Deploy) {
			d.Env.APIVersion = "fixpoint/v0"
		}, `apiVersion: is "fixpoint/v0"`},
		{"charm not uploaded", func(d *model.Deploy) {
			s := d.Env.Services["app"]
			s.CharmHash = strings.Repeat("0", 64)
			d.Env.Services["app"] = s
		}, "services.app.charm"},
		{"principal becomes subordinate", func(d *model.Deploy) {
			// extra moves to the subordinate tail charm, attached to
			// store; everything else about it is consistent.
			x := d.Env.Services["extra"]
			x.Charm, x.CharmHash, x.Units = d.Env.Services["tail"].Charm, d.Env.Services["tail"].CharmHash, nil
			d.Env.Services["extra"] = x
			delete(d.Env.Relations, "extra-store")
			d.Env.Relations["extra-host"] = []string{"store:juju-info", "extra:host"}
		}, "services.extra.charm: service extra runs a principal charm and the new charm tail is subordinate; a service cannot change between principal and subordinate"},
		{"planned against another index", func(d *model.Deploy) {
			d.BaseIndex = before.EnvIndex - 1
		}, "run plan again"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := cloneDeploy(t, &model.Deploy{Env: *good.Env.Env, Charms: good.Charms, BaseIndex: before.EnvIndex})
			c.mutate(d)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			resp, err := client.Deploy(ctx, d)
			if err == nil {
				t.Fatalf("deploy accepted at index %d: %v", resp.Index, resp.Changes)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("deploy refused with\n  %v\nwant it to say\n  %s", err, c.want)
			}
			// A command the state machine refuses still takes a log
			// index; nothing else may move.
			if after, afterJSON := stateJSONBut(t, data, before.Index); afterJSON != beforeJSON {
				t.Errorf("the state changed beyond its index: env_index %d -> %d\nbefore: %s\nafter:  %s", before.EnvIndex, after.EnvIndex, beforeJSON, afterJSON)
			}
		})
	}
	up.stop(t)
}

// cloneDeploy deep-copies a deploy through JSON, as it travels.
func cloneDeploy(t *testing.T, d *model.Deploy) *model.Deploy {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var out model.Deploy
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}
