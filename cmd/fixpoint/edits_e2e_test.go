package main

import (
	"archive/zip"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// editsDir is a directory holding the classic shop's charms (POSIX sh:
// they run from anywhere) under charms/ and an environment file env.cue
// naming them by relative paths, as a team keeps it: db and web of one
// unit each, related.
func editsDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, c := range []string{"classic-db", "classic-web"} {
		copyDir(t, repo("testdata", "charms", c), filepath.Join(dir, "charms", c))
	}
	writeFiles(t, dir, map[string]string{"env.cue": `apiVersion: "fixpoint/v1"
name: "shop"
services: {
	db: {charm: "./charms/classic-db", units: 1}
	web: {charm: "./charms/classic-web", units: 1}
}
relations: "web-db": ["web:db", "db:db"]
`})
	return dir
}

// editor runs edits by command from one directory against one control
// plane: cli runs the binary there with the flags that reach it.
type editor struct {
	t     *testing.T
	dir   string
	reach []string // --data-dir D, or the cluster's address flags
	env   []string
	// doc reads the environment's document.
	doc func() *api.EnvDoc
}

func (e *editor) cli(args ...string) run {
	e.t.Helper()
	return runFixpoint(e.t, 5*time.Minute, e.dir, e.env, append(args, e.reach...)...)
}

// must runs an edit that must succeed.
func (e *editor) must(args ...string) run {
	e.t.Helper()
	r := e.cli(args...)
	if r.code != 0 {
		e.t.Fatalf("%s: exit %d\n%s\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// refused runs an edit that must fail with exit code code, saying want,
// and change nothing: the document's revision stays.
func (e *editor) refused(code int, want string, args ...string) {
	e.t.Helper()
	before := e.doc().Revision
	r := e.cli(args...)
	if r.code != code || !strings.Contains(r.stderr, want) {
		e.t.Errorf("%s: exit %d, stderr %q; want exit %d saying %q", strings.Join(args, " "), r.code, r.stderr, code, want)
	}
	if after := e.doc().Revision; after != before {
		e.t.Errorf("%s: refused, yet the environment moved from revision %d to %d", strings.Join(args, " "), before, after)
	}
}

// units lists the alive units of svc in st.
func aliveUnits(st *engine.Status, svc string) []string {
	var out []string
	for name, u := range st.Units {
		if u.Service == svc && u.Life == string(model.Alive) {
			out = append(out, name)
		}
	}
	return sortedUnits(out)
}

// sortedUnits sorts unit names by service, then number.
func sortedUnits(names []string) []string {
	slices.SortFunc(names, model.CompareUnits)
	return names
}

// editSequence runs every edit by command, each waiting for the fixed
// point, and checks what status and export show after each: the test of
// `up` and of the three-server cluster share it.
func editSequence(e *editor, status func() *engine.Status) {
	t := e.t
	t.Helper()
	e.must("deploy", "./charms/classic-db", "cache", "-n", "2", "--config", "max_connections=7", "--wait", "--timeout", "4m")
	e.must("add-unit", "web", "--wait", "--timeout", "4m")
	e.must("remove-unit", "web/0", "--yes", "--wait", "--timeout", "4m")
	if r := e.must("relate", "web", "cache", "--wait", "--timeout", "4m"); !strings.Contains(r.stdout, "related web:db cache:db as web-cache") {
		t.Errorf("relate says:\n%s", r.stdout)
	}
	e.must("config", "cache", "max_connections=9", "port=7000", "--wait", "--timeout", "4m")
	e.must("config", "cache", "--reset", "port", "--wait", "--timeout", "4m")
	st := status()
	if got := aliveUnits(st, "web"); strings.Join(got, ",") != "web/1" {
		t.Errorf("web's units after add-unit and remove-unit web/0: %v, want web/1", got)
	}
	if got := aliveUnits(st, "cache"); len(got) != 2 || !st.Converged {
		t.Errorf("cache's units %v (converged %v), want 2 at the fixed point", got, st.Converged)
	}
	var doc api.EnvDoc
	if r := e.must("export", "-o", "json"); json.Unmarshal([]byte(r.stdout), &doc) != nil || doc.Revision != e.doc().Revision || doc.Env.Services["cache"].CharmHash == "" || doc.Charms[doc.Env.Services["cache"].CharmHash] == nil {
		t.Errorf("export -o json is not the document GET /v1/env serves:\n%s", r.stdout)
	}
	out := e.must("export").stdout
	for _, want := range []string{`cache: {`, `charm: "./charms/classic-db"`, `max_connections: 9`, `"web-cache": ["web:db", "cache:db"]`} {
		if !strings.Contains(out, want) {
			t.Errorf("export lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "port:") || strings.Contains(out, "charm_hash") {
		t.Errorf("export shows a reset option or a filled-in hash:\n%s", out)
	}
	// The team's file shows exactly the edits as drift.
	plan := e.cli("plan", "-f", "env.cue")
	for _, want := range []string{"- service cache (units go dying: cache/0, cache/1)", "- relation cache:db web:db"} {
		if plan.code != exitChanges || !strings.Contains(plan.stdout, want) {
			t.Errorf("plan -f env.cue: exit %d, want 2 listing %q:\n%s%s", plan.code, want, plan.stdout, plan.stderr)
		}
	}
	// The export, written where the paths resolve, applies as no change.
	writeFiles(t, e.dir, map[string]string{"exported.cue": out})
	if r := runFixpoint(t, time.Minute, e.dir, nil, "vet", "exported.cue"); r.code != 0 || !strings.Contains(r.stdout, "ok: 3 services, 2 relations") {
		t.Errorf("vet of the export: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := e.must("apply", "-f", "exported.cue"); !strings.Contains(r.stdout, "environment unchanged") {
		t.Errorf("apply of the export changed something:\n%s", r.stdout)
	}
	e.must("remove-service", "cache", "--yes", "--wait", "--timeout", "4m")
	out = e.must("export").stdout
	if strings.Contains(out, "cache") {
		t.Errorf("export after remove-service cache still names it:\n%s", out)
	}
}

// Every edit by command converges on `up`, shows in export, round-trips
// through apply, and bad input changes nothing.
func TestEditsByCommandOnUp(t *testing.T) {
	if testing.Short() {
		t.Skip("runs up; skipped in -short")
	}
	dir := editsDir(t)
	data := filepath.Join(t.TempDir(), "data")
	up := startUp(t, data, filepath.Join(dir, "env.cue"))
	up.waitConverged(t, 4*time.Minute)
	e := &editor{t: t, dir: dir, reach: []string{"--data-dir", data}, doc: func() *api.EnvDoc { return readDoc(t, upClient(t, data)) }}
	// Bad input first, while the environment is the file's.
	writeFiles(t, dir, map[string]string{"broken/metadata.yaml": "name: broken\nprovides: {db: {}}\n"})
	writeZip(t, filepath.Join(dir, "evil.charm"), map[string]string{"metadata.yaml": "name: evil\n", "../outside": "x"})
	e.refused(exitFailed, `charm classic-db of service db has no option "nope" (it has: max_connections, port, secret)`, "config", "db", "nope=1")
	e.refused(exitFailed, `is of type int: "many" is not an int`, "config", "db", "port=many")
	e.refused(exitFailed, `environment shop has no service "ghost" (services: db, web)`, "add-unit", "ghost")
	e.refused(exitFailed, "service web has no unit web/7, or it is already going", "remove-unit", "web/7", "--yes")
	e.refused(exitChanges, "not applied: this plan removes 1 unit", "remove-unit", "web/0")
	e.refused(exitFailed, `relation already exists: "web:db db:db" is relation web-db`, "relate", "web", "db")
	e.refused(exitFailed, `no relations found for "db web:juju-info"`, "relate", "db", "web:juju-info")
	e.refused(exitFailed, `relation matching "web db:cluster" not found`, "unrelate", "web", "db:cluster")
	e.refused(exitFailed, "service db already exists in environment shop", "deploy", "./charms/classic-db", "db")
	e.refused(exitFailed, "broken/metadata.yaml", "deploy", "./broken")
	e.refused(exitFailed, `charm archive entry "../outside" is outside the charm directory`, "deploy", "./evil.charm")
	e.refused(exitFailed, `charm directory "./nope" does not exist`, "deploy", "./nope")
	editSequence(e, func() *engine.Status { return statusOf(t, data) })

	// A subordinate is deployed with its container-scoped relation in the
	// same change: alone the environment would not resolve.
	writeFiles(t, dir, map[string]string{
		"charms/logger/metadata.yaml": "name: logger\nsummary: a subordinate\nsubordinate: true\nrequires:\n  host: {interface: juju-info, scope: container}\n",
		"charms/logger/hooks/install": "#!/bin/sh\nstatus-set active \"beside $JUJU_UNIT_NAME\"\n",
	})
	if err := os.Chmod(filepath.Join(dir, "charms/logger/hooks/install"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.refused(exitFailed, "deploy it related: fixpoint deploy ./charms/logger logger --relate PRINCIPAL", "deploy", "./charms/logger")
	e.refused(exitFailed, `--relate db:db: no relations found for "logger db:db"`, "deploy", "./charms/logger", "--relate", "db:db")
	e.must("deploy", "./charms/logger", "--relate", "web", "--wait", "--timeout", "4m")
	if got := aliveUnits(statusOf(t, data), "logger"); len(got) != 1 {
		t.Errorf("logger's units %v, want one beside web/1", got)
	}
	if out := e.must("export").stdout; !strings.Contains(out, `"logger-web": ["logger:host", "web:juju-info"]`) {
		t.Errorf("export lacks the subordinate's relation:\n%s", out)
	}
}

// readDoc reads the environment's document through c.
func readDoc(t *testing.T, c *api.Client) *api.EnvDoc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	doc, err := c.Env(ctx)
	if err != nil {
		t.Fatalf("GET /v1/env: %v", err)
	}
	return doc
}

// The edits on the three-server TLS topology, units on a remote agent.
func TestEditsByCommandOnTLSCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts four processes; skipped in -short")
	}
	c := startCluster(t, 3, true, "--agent-ttl", "2s")
	c.agent("m1")
	c.waitMachines("m1")
	dir := editsDir(t)
	e := &editor{t: t, dir: dir, reach: c.clientTL, env: []string{"FIXPOINT_ADDR=" + strings.Join(c.addrs, ","), "FIXPOINT_TOKEN=" + c.token},
		doc: func() *api.EnvDoc { return readDoc(t, c.api()) }}
	e.must("apply", "-f", "env.cue", "--wait", "--timeout", "4m")
	editSequence(e, c.status)
	// Every server serves the document the edits made.
	want := e.doc().Revision
	rafttest.Eventually(t, time.Minute, "every server at the last revision", func() error {
		for _, addr := range c.addrs {
			var doc api.EnvDoc
			if _, err := c.get(addr, "/v1/env", &doc); err != nil || doc.Revision != want {
				return fmt.Errorf("%s: revision %d (%v), want %d", addr, doc.Revision, err, want)
			}
		}
		return nil
	})
}

// writeZip writes a .charm archive (a zip) of files, names as given.
func writeZip(t *testing.T, path string, files map[string]string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(files[name])); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}

// editResult is one edit a client made: what, and whether the CLI
// acknowledged it (exit 0).
type editResult struct {
	args  []string
	acked bool
	out   string
}

// Two clients edit one environment at once, in random interleavings of
// add-unit and config: the document at the end holds every edit either
// was told was made, and none it was not (a lost edit, or one made twice,
// shows as a wrong count or value).
func TestConcurrentEditsNeverLoseOne(t *testing.T) {
	if testing.Short() {
		t.Skip("runs up; skipped in -short")
	}
	dir := editsDir(t)
	data := filepath.Join(t.TempDir(), "data")
	startUp(t, data, filepath.Join(dir, "env.cue")).waitConverged(t, 4*time.Minute)
	c := upClient(t, data)
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	// Client a sets max_connections, client b port: each key's final
	// value is its client's last acknowledged one.
	keys := [2]string{"max_connections", "port"}
	retries := 0
	for round := range 3 {
		var plans [2][][]string
		for i := range plans {
			for n := range 3 + rng.IntN(3) {
				if rng.IntN(2) == 0 {
					plans[i] = append(plans[i], []string{"add-unit", "db"})
				} else {
					plans[i] = append(plans[i], []string{"config", "db", fmt.Sprintf("%s=%d", keys[i], 1000*(round+1)+10*n+i)})
				}
			}
		}
		before := readDoc(t, c)
		var results [2][]editResult
		var wg sync.WaitGroup
		for i := range plans {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, args := range plans[i] {
					code, out := runQuiet(t, dir, append(args, "--data-dir", data)...)
					results[i] = append(results[i], editResult{args: args, acked: code == 0, out: out})
				}
			}()
		}
		wg.Wait()
		after := readDoc(t, c)
		added := 0
		for i, rs := range results {
			last := ""
			for _, r := range rs {
				retries += strings.Count(r.out, "another change landed first")
				if !r.acked {
					t.Logf("round %d client %d: %v not acknowledged:\n%s", round, i, r.args, r.out)
					continue
				}
				if r.args[0] == "add-unit" {
					added++
				} else {
					last = strings.TrimPrefix(r.args[2], keys[i]+"=")
				}
			}
			want := fmt.Sprint(before.Env.Services["db"].Config[keys[i]])
			if last != "" {
				want = last
			}
			if got := fmt.Sprint(after.Env.Services["db"].Config[keys[i]]); got != want {
				t.Errorf("round %d: db %s is %s, want client %d's last acknowledged %s (edits %v)", round, keys[i], got, i, want, results[i])
			}
		}
		if got, want := model.ServiceUnits(after.Env.Services["db"]), model.ServiceUnits(before.Env.Services["db"])+added; got != want {
			t.Errorf("round %d: db has %d units, want %d: %d before and %d acknowledged add-units (edits %v)", round, got, want, model.ServiceUnits(before.Env.Services["db"]), added, results)
		}
	}
	t.Logf("%d edit(s) read the environment again after another landed first", retries)
}

// runQuiet runs the binary in dir to completion from any goroutine and
// returns its exit code (-1 when it could not run) and its output.
func runQuiet(t *testing.T, dir string, args ...string) (int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := command(ctx, t, nil, append([]string{fixpointBin(t)}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		return -1, err.Error()
	}
	return 0, string(out)
}
