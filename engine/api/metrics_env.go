package api

import (
	"context"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// envSeries are the series of the environments other than the default
// one: the same families as the default environment's, with an env
// label. Every such environment's controller feeds the hook-run series,
// and the series of an environment removed are deleted, so that the
// label's values are the environments that exist, at most
// Limits.Environments of them. It is an unchecked collector (its Describe
// sends nothing): its families are those the default environment's
// series registered without the label.
type envSeries struct {
	node Node
	ctls Controllers
	log  hclog.Logger
	m    *metrics

	reconciles   *prometheus.CounterVec
	hookDuration *prometheus.HistogramVec

	mu sync.Mutex
	// observed are the controllers whose runs feed the series.
	observed map[*engine.Controller]bool
	// seen are the environments that may have series.
	seen map[string]bool
}

func newEnvSeries(node Node, ctls Controllers, log hclog.Logger) *envSeries {
	return &envSeries{node: node, ctls: ctls, log: log,
		reconciles:   prometheus.NewCounterVec(reconcilesOpts, []string{"env", "service", "outcome"}),
		hookDuration: prometheus.NewHistogramVec(hookDurationOpts, []string{"env", "service"}),
		observed:     map[*engine.Controller]bool{}, seen: map[string]bool{}}
}

// Describe sends nothing: the collector is unchecked.
func (e *envSeries) Describe(chan<- *prometheus.Desc) {}

// Collect follows the environments, then reports each one's gauges and
// hook-run series.
func (e *envSeries) Collect(ch chan<- prometheus.Metric) {
	for _, env := range e.follow() {
		collectEnv(ch, envGauges, env.node, env.ctl, env.name)
	}
	e.reconciles.Collect(ch)
	e.hookDuration.Collect(ch)
}

// scraped is one environment's view at a scrape.
type scraped struct {
	name string
	node Node
	ctl  *engine.Controller
}

// follow brings the series in line with the environments the controllers
// run and returns each one but the default.
func (e *envSeries) follow() []scraped {
	if e.ctls == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []scraped
	now := map[string]bool{}
	ctls := map[*engine.Controller]bool{}
	for _, name := range e.ctls.Envs() {
		ctl := e.ctls.Controller(name)
		if name == "" || ctl == nil {
			continue
		}
		now[name], ctls[ctl] = true, true
		node := e.observeLocked(name, ctl)
		out = append(out, scraped{name: name, node: node, ctl: ctl})
	}
	for name := range e.seen {
		if !now[name] {
			e.reconciles.DeletePartialMatch(prometheus.Labels{"env": name})
			e.hookDuration.DeletePartialMatch(prometheus.Labels{"env": name})
			delete(e.seen, name)
		}
	}
	for ctl := range e.observed {
		if !ctls[ctl] {
			delete(e.observed, ctl)
		}
	}
	return out
}

// observe makes ctl's runs feed environment name's series, once: the
// first request routed to a new environment calls it, so that its first
// runs are counted before the next scrape.
func (e *envSeries) observe(name string, ctl *engine.Controller) {
	if name == "" || ctl == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.observeLocked(name, ctl)
}

// observeLocked is observe under e.mu; it returns the environment's node.
func (e *envSeries) observeLocked(name string, ctl *engine.Controller) Node {
	node := Node(envNode{Node: e.node, env: name})
	if !e.observed[ctl] {
		e.observed[ctl] = true
		e.seen[name] = true
		log, m := e.log.With("env", name), e.m
		ctl.History().Observe(func(r engine.Run) { m.observeRun(name, r) })
		ctl.History().Observe(func(r engine.Run) { logRun(log, logged(node, r)) })
	}
	return node
}

// observingAgents hands the agents' reports on, first making sure the
// controller of each environment they name feeds that environment's
// series: its runs are counted from its first one, scraped or not.
type observingAgents struct {
	Agents
	series *envSeries
}

// Accept observes the reports' environments, then accepts them.
func (o observingAgents) Accept(ctx context.Context, machine string, reports []wire.Report) (*model.Response, error) {
	last := ""
	for i := range reports {
		if env := reports[i].Env; env != "" && env != last {
			last = env
			o.series.observe(env, o.series.ctls.Controller(env))
		}
	}
	return o.Agents.Accept(ctx, machine, reports)
}
