// Command planbench measures how long `fixpoint vet` and `fixpoint plan`
// take on large environments.
//
// For each size it writes an environment of that many services (a quarter
// databases, half web front ends each related to a database, a quarter
// proxies each related to a web front end, every charm with a peer
// endpoint) and three charms to a temporary directory, then times:
//
//   - vet: charm.Check on the file, as `fixpoint vet` runs it: CUE
//     evaluation against the schema, charm metadata, model.Resolve;
//   - deploy: State.Apply of the whole environment on an empty state with
//     one registered machine (what the control plane does on apply);
//   - plan: model.Resolve plus model.Plan against that deployed state, with
//     nothing to change (what `fixpoint plan` does after reading the state);
//   - plan+1: the same with one service scaled up, so one change;
//   - command: State.Apply of a command that changes nothing (a liveness
//     report with every machine alive) on the deployed state: the floor
//     every Raft entry pays;
//   - result: State.Apply of one unit's hook result that changes one of
//     its relation settings: the hot path of a converging environment;
//   - export: the environment's document read and encoded, as GET /v1/env
//     answers it (what `fixpoint export` prints);
//   - edit: an imperative edit's round trip on the model: the document
//     read, one unit added to a copy (model.EditAddUnits, as `fixpoint
//     add-unit`), and the deploy of it checked against the revision and
//     applied. Both must not grow with the units (-units 10,1000 shows
//     it).
//
// The last line is one JSON object with the figures of the largest size,
// CPU times in milliseconds, for scripts.
//
// Each figure is the median of -runs runs, as wall-clock time and as the
// CPU time the process used (user+system, all threads, so the garbage
// collector's work counts): on a shared, loaded machine the CPU figure is
// the one that compares.
//
//	go run ./bench/planbench                  # 100, 1000 and 5000 services
//	go run ./bench/planbench -sizes 100,1000 -runs 5
//	go run ./bench/planbench -sizes 100 -units 10,100,1000   # 1,000 to 100,000 units
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/fixpoint/fixpoint/bench/internal/proc"
	"github.com/fixpoint/fixpoint/engine/charm"
	"github.com/fixpoint/fixpoint/model"
)

var charms = map[string]string{
	"db": `name: "db"
provides: db: interface: "sql"
peers: cluster: interface: "db-cluster"
config: options: max_connections: {type: "int", default: 100}
`,
	"web": `name: "web"
requires: db: interface: "sql"
provides: website: interface: "http"
peers: cluster: interface: "web-cluster"
config: options: {port: {type: "int", default: 8080}, debug: {type: "boolean", default: false}}
`,
	"proxy": `name: "proxy"
requires: backend: interface: "http"
peers: cluster: interface: "proxy-cluster"
`,
}

func main() {
	sizesFlag := flag.String("sizes", "100,1000,5000", "environment sizes, in services, comma-separated")
	runs := flag.Int("runs", 3, "runs per measurement; the median is printed")
	unitsFlag := flag.String("units", "2", "units per service, comma-separated")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fatalf("%v", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fatalf("%v", err)
		}
		defer pprof.StopCPUProfile()
	}
	sizes, err := proc.Counts("sizes", *sizesFlag, 4, 0)
	if err != nil {
		fatalf("%v (services)", err)
	}
	perService, err := proc.Counts("units", *unitsFlag, 1, 0)
	if err != nil {
		fatalf("%v (units per service)", err)
	}
	dir, err := os.MkdirTemp("", "planbench-")
	if err != nil {
		fatalf("%v", err)
	}
	defer os.RemoveAll(dir)
	for name, src := range charms {
		if err := os.MkdirAll(filepath.Join(dir, "charms", name), 0o755); err != nil {
			fatalf("%v", err)
		}
		if err := os.WriteFile(filepath.Join(dir, "charms", name, "charm.cue"), []byte(src), 0o644); err != nil {
			fatalf("%v", err)
		}
	}
	const row = "%8v %9v %6v %20v %20v %20v %20v %20v %20v %20v %20v\n"
	fmt.Printf(row, "services", "relations", "units", "vet wall/cpu", "deploy wall/cpu", "plan wall/cpu", "plan+1 wall/cpu", "command wall/cpu", "result wall/cpu", "export wall/cpu", "edit wall/cpu")
	var first, last result
	for i, n := range sizes {
		for j, units := range perService {
			last = measure(dir, n, units, *runs)
			if i == 0 && j == 0 {
				first = last
			}
			fmt.Printf(row, n, last.relations, last.units, last.vet, last.deploy, last.plan, last.plan1, last.command, last.result, last.export, last.edit)
		}
	}
	summary, err := json.Marshal(map[string]any{
		"bench": "planbench", "services": sizes[len(sizes)-1], "units": last.units, "runs": *runs,
		"vet_cpu_ms": ms(last.vet.cpu), "deploy_cpu_ms": ms(last.deploy.cpu), "plan_cpu_ms": ms(last.plan.cpu),
		"command_cpu_ms": ms(last.command.cpu), "result_cpu_ms": ms(last.result.cpu),
		"export_cpu_ms": ms(last.export.cpu), "edit_cpu_ms": ms(last.edit.cpu),
		// The last size's cost over the first's: 1 when an export or an
		// edit does not grow with the environment.
		"export_vs_first": ratio(last.export.cpu, first.export.cpu), "edit_vs_first": ratio(last.edit.cpu, first.edit.cpu),
	})
	if err != nil {
		fatalf("%v", err)
	}
	fmt.Println(string(summary))
}

// ratio is a over b, to two places; 0 when b is.
func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return math.Round(float64(a)/float64(b)*100) / 100
}

// ms is d in milliseconds, to the microsecond.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

type result struct {
	relations, units         int
	vet, deploy, plan, plan1 timing
	command, result          timing
	export, edit             timing
}

func measure(dir string, n, units, runs int) result {
	env := filepath.Join(dir, fmt.Sprintf("env-%d-%d.cue", n, units))
	if err := os.WriteFile(env, []byte(environment(n, units)), 0o644); err != nil {
		fatalf("%v", err)
	}
	var res result
	var checked *charm.Checked
	res.vet = median(runs, func() {
		c, err := charm.Check(env)
		if err != nil {
			fatalf("vet of %d services: %v", n, err)
		}
		checked = c
	})
	deploy := &model.Deploy{Env: *checked.Env.Env, Charms: checked.Charms, Record: true}
	var st *model.State
	res.deploy = median(runs, func() {
		st = model.NewState()
		if _, err := st.Apply(1, &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: "local", Address: "127.0.0.1"}}); err != nil {
			fatalf("register machine: %v", err)
		}
		if _, err := st.Apply(2, &model.Command{Op: model.OpDeploy, Deploy: deploy}); err != nil {
			fatalf("deploy of %d services: %v", n, err)
		}
	})
	res.units = len(st.Units)
	for _, r := range st.Relations {
		if len(r.Endpoints) == 2 {
			res.relations++
		}
	}
	res.plan = median(runs, func() {
		d, err := model.Resolve(&deploy.Env, deploy.Charms)
		if err != nil {
			fatalf("resolve of %d services: %v", n, err)
		}
		if changes := model.Plan(st, d); len(changes) != 0 {
			fatalf("plan of the deployed environment is not empty: %v", changes)
		}
	})
	scaled := deploy.Env
	scaled.Services = map[string]model.ServiceSpec{}
	for k, v := range deploy.Env.Services {
		scaled.Services[k] = v
	}
	one := scaled.Services["web-0"]
	more := units + 1
	one.Units = &more
	scaled.Services["web-0"] = one
	res.plan1 = median(runs, func() {
		d, err := model.Resolve(&scaled, deploy.Charms)
		if err != nil {
			fatalf("resolve of %d services: %v", n, err)
		}
		if changes := model.Plan(st, d); len(changes) != 1 {
			fatalf("plan of one scaled service: %d changes, want 1", len(changes))
		}
	})
	index := uint64(3)
	res.command = median(runs, func() {
		if _, err := st.Apply(index, &model.Command{Op: model.OpLiveness, Liveness: &model.SetLiveness{Lost: map[string]bool{}}}); err != nil {
			fatalf("liveness: %v", err)
		}
		index++
	})
	rel := st.RelationsOf("web-0")[0].ID
	res.result = median(runs, func() {
		r := model.Result{Unit: "web-0/0", Hash: fmt.Sprint("u", index), Seen: &model.Seen{Life: model.Alive},
			Settings: map[int]map[string]string{rel: {"n": fmt.Sprint(index)}}}
		if _, err := st.Apply(index, &model.Command{Op: model.OpResults, Results: []model.Result{r}}); err != nil {
			fatalf("result: %v", err)
		}
		index++
	})
	res.export = median(runs, func() {
		doc, err := st.EnvDocument()
		if err != nil {
			fatalf("export: %v", err)
		}
		if _, err := json.Marshal(doc); err != nil {
			fatalf("export: %v", err)
		}
	})
	res.edit = median(runs, func() {
		doc, err := st.EnvDocument()
		if err != nil {
			fatalf("edit: %v", err)
		}
		edited := model.EditCopy(doc)
		if err := model.EditAddUnits(edited, "web-0", 1, &deploy.Charms[edited.Services["web-0"].CharmHash].Meta); err != nil {
			fatalf("edit: %v", err)
		}
		d := &model.Deploy{Env: *edited, Charms: deploy.Charms, BaseIndex: st.EnvIndex, Record: true}
		if _, err := st.Apply(index, &model.Command{Op: model.OpDeploy, Deploy: d}); err != nil {
			fatalf("edit: %v", err)
		}
		index++
	})
	return res
}

// environment returns an environment of n services: n/4 databases, n/2
// web front ends each related to a database, the rest proxies each related
// to a web front end.
func environment(n, units int) string {
	dbs, webs := n/4, n/2
	proxies := n - dbs - webs
	var b strings.Builder
	b.WriteString("apiVersion: \"fixpoint/v1\"\nname: \"bench\"\nservices: {\n")
	for i := 0; i < dbs; i++ {
		fmt.Fprintf(&b, "\t\"db-%d\": {charm: \"./charms/db\", units: %d, config: max_connections: %d}\n", i, units, 100+i)
	}
	for i := 0; i < webs; i++ {
		fmt.Fprintf(&b, "\t\"web-%d\": {charm: \"./charms/web\", units: %d, config: port: %d}\n", i, units, 8000+i)
	}
	for i := 0; i < proxies; i++ {
		fmt.Fprintf(&b, "\t\"proxy-%d\": {charm: \"./charms/proxy\", units: %d}\n", i, units)
	}
	b.WriteString("}\nrelations: {\n")
	for i := 0; i < webs; i++ {
		fmt.Fprintf(&b, "\t\"web-%d-db\": [\"web-%d:db\", \"db-%d\"]\n", i, i, i%dbs)
	}
	for i := 0; i < proxies; i++ {
		fmt.Fprintf(&b, "\t\"proxy-%d-web\": [\"proxy-%d\", \"web-%d:website\"]\n", i, i, i%webs)
	}
	b.WriteString("}\n")
	return b.String()
}

// timing is a measurement as wall-clock and CPU time.
type timing struct{ wall, cpu time.Duration }

func (t timing) String() string { return round(t.wall) + "/" + round(t.cpu) }

// median runs f runs times and returns the median wall and CPU times
// (each the median of its own).
func median(runs int, f func()) timing {
	if runs < 1 {
		runs = 1
	}
	walls := make([]time.Duration, runs)
	cpus := make([]time.Duration, runs)
	for i := range walls {
		c0, start := cpuTime(), time.Now()
		f()
		walls[i], cpus[i] = time.Since(start), cpuTime()-c0
	}
	slices.Sort(walls)
	slices.Sort(cpus)
	return timing{walls[len(walls)/2], cpus[len(cpus)/2]}
}

// cpuTime is the user and system time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func round(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "planbench: "+format+"\n", args...)
	os.Exit(1)
}
