package api

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	gometrics "github.com/hashicorp/go-metrics/compat"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/model"
)

// hookBuckets spans hooks from a few milliseconds to the 5-minute timeout.
var hookBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// raftBuckets spans a local disk sync to a slow cross-zone round trip.
var raftBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}

// metrics is one server's Prometheus registry. Counters and histograms
// are fed as things happen; gauges are read from the state at scrape time.
type metrics struct {
	reg          *prometheus.Registry
	reconciles   *prometheus.CounterVec
	hookDuration *prometheus.HistogramVec
	requests     *prometheus.CounterVec
	// known reports whether a service is in environment env's state.
	known func(env, service string) bool
	// envs are the other environments' series (metrics_env.go).
	envs *envSeries
}

// gcCycles adds the runtime's count of collections it started itself
// and of those the server asked for (its idle collector, gcidle) to the
// Go collector's defaults: a collection the runtime starts lands inside a
// burst of hand-outs, and is what slows a change's wake.
var gcCycles = collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile(`^/gc/cycles/(automatic|forced):gc-cycles$`)}

func newMetrics(node Node, ctl *engine.Controller, envs Controllers, log hclog.Logger) *metrics {
	m := &metrics{
		reg:          prometheus.NewRegistry(),
		reconciles:   prometheus.NewCounterVec(reconcilesOpts, []string{"service", "outcome"}),
		hookDuration: prometheus.NewHistogramVec(hookDurationOpts, []string{"service"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fixpoint_http_requests_total",
			Help: "API requests served, by route and status code.",
		}, []string{"route", "code"}),
	}
	m.envs = newEnvSeries(node, envs, log)
	m.reg.MustRegister(m.reconciles, m.hookDuration, m.requests,
		&stateCollector{node: node, ctl: ctl}, m.envs, raftSink(),
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(gcCycles)),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.known = func(env, service string) bool {
		ok := false
		_ = node.ViewCluster(func(c *model.Cluster) error {
			if st, found := c.Lookup(env); found {
				_, ok = st.Services[service]
			}
			return nil
		})
		return ok
	}
	m.envs.m = m
	if ctl != nil {
		ctl.History().Observe(func(r engine.Run) { m.observeRun("", r) })
		ctl.History().Observe(func(r engine.Run) { logRun(log, logged(node, r)) })
	}
	return m
}

// logRun logs a hook run as the leader took it: failures as warnings,
// the rest for debugging.
func logRun(log hclog.Logger, r engine.Run) {
	hash := r.Hash
	if len(hash) > 12 {
		hash = hash[:12]
	}
	switch r.Outcome {
	case engine.RunError:
		log.Warn("hook failed", "unit", r.Unit, "universe", hash, "took", r.Duration.String(), "error", r.Error)
	default:
		log.Debug("hook ran", "unit", r.Unit, "universe", hash, "took", r.Duration.String(), "outcome", r.Outcome, "changes", len(r.Changes)+r.Omitted)
	}
}

// observeRun counts a run of environment env ("" the default one, whose
// series carry no env label, as a v0.3.0 server's do).
func (m *metrics) observeRun(env string, r engine.Run) {
	// Every label value becomes a series, kept for the process's life
	// (another environment's until it goes, envSeries.follow): take
	// services only from the state, never from what an agent sent.
	if m.known != nil && !m.known(env, r.Service) {
		return
	}
	switch r.Outcome {
	case engine.RunOK, engine.RunError, engine.RunStale:
	default:
		return
	}
	if env != "" {
		m.envs.reconciles.WithLabelValues(env, r.Service, r.Outcome).Inc()
		if r.Duration > 0 {
			m.envs.hookDuration.WithLabelValues(env, r.Service).Observe(r.Duration.Seconds())
		}
		return
	}
	m.reconciles.WithLabelValues(r.Service, r.Outcome).Inc()
	if r.Duration > 0 {
		m.hookDuration.WithLabelValues(r.Service).Observe(r.Duration.Seconds())
	}
}

// The hook-run series' names and help, which the default environment's
// series (no env label) and the others' (an env label, metrics_env.go)
// share: one family each.
var (
	reconcilesOpts = prometheus.CounterOpts{
		Name: "fixpoint_reconciles_total",
		Help: "Hook runs reported to this node while it led, by service and outcome (ok, error, stale); an environment other than the default is its env label.",
	}
	hookDurationOpts = prometheus.HistogramOpts{
		Name:    "fixpoint_hook_duration_seconds",
		Help:    "How long reconcile hooks ran, as their agents measured it, by service; an environment other than the default is its env label.",
		Buckets: hookBuckets,
	}
)

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// serve routes one request, counting it by the pattern that matched.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if s.metrics == nil {
		s.mux.ServeHTTP(w, r)
		return
	}
	start := time.Now()
	cw := &codeWriter{ResponseWriter: w, code: http.StatusOK}
	s.mux.ServeHTTP(cw, r)
	route := r.Pattern
	if route == "" {
		route = "unmatched"
	}
	s.metrics.requests.WithLabelValues(route, strconv.Itoa(cw.code)).Inc()
	logf, on := s.log.Debug, s.log.IsDebug()
	if r.Method == http.MethodGet {
		logf, on = s.log.Trace, s.log.IsTrace() // reads and long polls are many
	}
	if !on {
		// The arguments cost allocations on every request.
		return
	}
	logf("request", "method", r.Method, "path", r.URL.Path, "code", cw.code, "took", time.Since(start).String(), "remote", r.RemoteAddr)
}

// codeWriter remembers the status code written.
type codeWriter struct {
	http.ResponseWriter
	code int
}

func (c *codeWriter) WriteHeader(code int) {
	c.code = code
	c.ResponseWriter.WriteHeader(code)
}

// Flush lets streamed responses through the wrapper.
func (c *codeWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (c *codeWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// stateCollector reads the gauges from the node and its controller at
// scrape time, so they are never out of date.
type stateCollector struct {
	node Node
	ctl  *engine.Controller
}

var (
	descIndex    = prometheus.NewDesc("fixpoint_index", "Raft index of the last entry this node applied.", nil, nil)
	descLeader   = prometheus.NewDesc("fixpoint_is_leader", "1 if this node leads the control plane.", nil, nil)
	descContact  = prometheus.NewDesc("fixpoint_raft_last_contact_seconds", "Time since this node last heard from the leader (0 on the leader).", nil, nil)
	descMachines = prometheus.NewDesc("fixpoint_machines", "Registered machines by agent state (started, lost).", []string{"state"}, nil)
	descLevel    = prometheus.NewDesc("fixpoint_cluster_feature_level", "The cluster's feature level, as this node's log records it.", nil, nil)
	descServers  = prometheus.NewDesc("fixpoint_cluster_servers", "Control-plane servers by the feature level of their build (\"unknown\": not answering), as this node last heard.", []string{"level"}, nil)
	descMixed    = prometheus.NewDesc("fixpoint_cluster_mixed", "1 while the servers run builds of different feature levels (a rolling upgrade).", nil, nil)
	descHalted   = prometheus.NewDesc("fixpoint_halted", "1 when this node stopped applying the log at an entry its build cannot apply.", nil, nil)

	// An environment's gauges: the default environment's without an env
	// label, as a v0.3.0 server's, the others' with one.
	defaultGauges = newEnvGauges(nil)
	envGauges     = newEnvGauges([]string{"env"})
)

// envGaugeDescs are the gauges one environment's controller gives.
type envGaugeDescs struct {
	units, queue, stale, errors, diverged, converged, wakeups *prometheus.Desc
}

// newEnvGauges describes an environment's gauges with the labels env
// (nil, or the env label) before their own.
func newEnvGauges(env []string) envGaugeDescs {
	with := func(own ...string) []string { return append(append([]string(nil), env...), own...) }
	suffix := "; an environment other than the default is its env label."
	return envGaugeDescs{
		units:     prometheus.NewDesc("fixpoint_units", "Units by phase (pending, reconciling, settled, error), and those on a lost machine (lost), as status's summary counts them"+suffix, with("phase"), nil),
		queue:     prometheus.NewDesc("fixpoint_queue_depth", "Stale units not yet claimed by an agent"+suffix, with(), nil),
		stale:     prometheus.NewDesc("fixpoint_stale_units", "Units whose universe differs from the one they last reconciled: queued or running"+suffix, with(), nil),
		errors:    prometheus.NewDesc("fixpoint_units_in_error", "Units in the error phase"+suffix, with(), nil),
		diverged:  prometheus.NewDesc("fixpoint_diverged_units", "Units stopped because they diverged (reconciled too often, or their output oscillates)"+suffix, with(), nil),
		converged: prometheus.NewDesc("fixpoint_converged", "1 when the environment is at its fixed point"+suffix, with(), nil),
		wakeups:   prometheus.NewDesc("fixpoint_work_polls_woken_total", "Agents' work polls woken to look for work (a change wakes only the machines with work)"+suffix, with(), nil),
	}
}

func (d envGaugeDescs) all() []*prometheus.Desc {
	return []*prometheus.Desc{d.units, d.queue, d.stale, d.errors, d.diverged, d.converged, d.wakeups}
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range append(defaultGauges.all(), descIndex, descLeader, descContact, descMachines, descLevel, descServers, descMixed, descHalted) {
		ch <- d
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(descIndex, float64(c.node.Index()))
	leader := 0.0
	if c.node.IsLeader() {
		leader = 1
	}
	gauge(descLeader, leader)
	if leader == 1 {
		gauge(descContact, 0)
	} else {
		gauge(descContact, c.node.LastContact().Seconds())
	}
	collectLevels(c.node, gauge)
	started, lost := 0, 0
	_ = c.node.View(func(st *model.State) error {
		for _, m := range st.Machines {
			if m.Lost {
				lost++
			} else {
				started++
			}
		}
		return nil
	})
	gauge(descMachines, float64(started), "started")
	gauge(descMachines, float64(lost), "lost")
	if c.ctl != nil {
		collectEnv(ch, defaultGauges, c.node, c.ctl)
	}
}

// collectEnv reports one environment's gauges, described by d and
// labelled labels (none for the default environment, else its name).
func collectEnv(ch chan<- prometheus.Metric, d envGaugeDescs, node Node, ctl *engine.Controller, labels ...string) {
	gauge := func(desc *prometheus.Desc, v float64, own ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, append(append([]string(nil), labels...), own...)...)
	}
	ch <- prometheus.MustNewConstMetric(d.wakeups, prometheus.CounterValue, float64(ctl.Stats().Wakeups), labels...)
	// The summary, not the status: the same phases without a record
	// per unit, so a scrape costs the leader no allocation that grows
	// with the environment, and cached for the status waits that ask at
	// the same index.
	sum, err := ctl.Summary(0)
	if err != nil {
		return
	}
	p := sum.Phases
	for phase, n := range map[string]int{engine.Pending: p.Pending, engine.Reconciling: p.Reconciling, engine.Settled: p.Settled, engine.Error: p.Error, "lost": p.Lost} {
		gauge(d.units, float64(n), phase)
	}
	gauge(d.queue, float64(p.Pending))
	gauge(d.stale, float64(p.Pending+p.Reconciling))
	gauge(d.errors, float64(p.Error))
	converged := 0.0
	if sum.Converged {
		converged = 1
	}
	gauge(d.converged, converged)
	diverged := 0
	_ = node.View(func(st *model.State) error {
		for _, u := range st.Units {
			if u.Error != nil && u.Error.Kind == model.ErrDiverged && u.Resolved == nil {
				diverged++
			}
		}
		return nil
	})
	gauge(d.diverged, float64(diverged))
}

// raftMetrics turns what hashicorp/raft reports through go-metrics into
// Prometheus histograms: commit latency on the leader, and how long the
// state machine takes to apply an entry.
type raftMetrics struct {
	commit prometheus.Histogram
	apply  prometheus.Histogram
}

var (
	raftOnce sync.Once
	raftM    *raftMetrics
)

// raftSink installs, once per process, a go-metrics sink that feeds the
// raft histograms, and returns them for registration. raft keeps emitting
// to the process-wide go-metrics instance, so every node in the process
// shares them.
func raftSink() prometheus.Collector {
	raftOnce.Do(func() {
		raftM = &raftMetrics{
			commit: prometheus.NewHistogram(prometheus.HistogramOpts{
				Name:    "fixpoint_raft_commit_seconds",
				Help:    "Time from the leader dispatching a log entry to its commit (raft.commitTime).",
				Buckets: raftBuckets,
			}),
			apply: prometheus.NewHistogram(prometheus.HistogramOpts{
				Name:    "fixpoint_raft_fsm_apply_seconds",
				Help:    "Time the state machine took to apply committed entries: one, or one batch (raft.fsm.apply, raft.fsm.applyBatch).",
				Buckets: raftBuckets,
			}),
		}
		cfg := gometrics.DefaultConfig("")
		cfg.EnableHostname = false
		cfg.EnableRuntimeMetrics = false
		cfg.EnableServiceLabel = false
		cfg.TimerGranularity = time.Millisecond
		_, _ = gometrics.NewGlobal(cfg, raftM)
	})
	return raftM
}

func (r *raftMetrics) Describe(ch chan<- *prometheus.Desc) {
	r.commit.Describe(ch)
	r.apply.Describe(ch)
}

func (r *raftMetrics) Collect(ch chan<- prometheus.Metric) {
	r.commit.Collect(ch)
	r.apply.Collect(ch)
}

// AddSample receives raft's timings, in milliseconds.
func (r *raftMetrics) AddSample(key []string, val float32) {
	switch strings.Join(key, ".") {
	case "raft.commitTime":
		r.commit.Observe(float64(val) / 1000)
	case "raft.fsm.apply", "raft.fsm.applyBatch":
		r.apply.Observe(float64(val) / 1000)
	}
}

func (r *raftMetrics) AddSampleWithLabels(key []string, val float32, _ []gometrics.Label) {
	r.AddSample(key, val)
}
func (r *raftMetrics) SetGauge([]string, float32)                                 {}
func (r *raftMetrics) SetGaugeWithLabels([]string, float32, []gometrics.Label)    {}
func (r *raftMetrics) EmitKey([]string, float32)                                  {}
func (r *raftMetrics) IncrCounter([]string, float32)                              {}
func (r *raftMetrics) IncrCounterWithLabels([]string, float32, []gometrics.Label) {}

// collectLevels reports the cluster's feature level, the servers by the
// level of their build (labels are levels: a handful at most), whether
// they are mixed, and whether this node halted.
func collectLevels(n Node, gauge func(d *prometheus.Desc, v float64, labels ...string)) {
	c := n.ClusterLevel()
	gauge(descLevel, float64(c.Level))
	by := map[string]float64{}
	for _, srv := range c.Nodes {
		label := "unknown"
		if srv.Level > 0 {
			label = strconv.Itoa(int(srv.Level))
		}
		by[label]++
	}
	for label, count := range by {
		gauge(descServers, count, label)
	}
	mixed, halted := 0.0, 0.0
	if c.Mixed {
		mixed = 1
	}
	if n.Halted() != nil {
		halted = 1
	}
	gauge(descMixed, mixed)
	gauge(descHalted, halted)
}
