package api

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fixpoint/fixpoint/engine/memgov"
	"github.com/fixpoint/fixpoint/model/fault"
)

// intake admits the requests that grow the node's memory and that an
// agent sends again when refused: work polls (hand-outs), results and
// debug-log posts. Under memory pressure (memgov) they are admitted at a
// pace and one whose turn is too far off is answered 503, retryable;
// operators' writes and reads, heartbeats and registrations are served as
// ever, so that the cluster stays steerable and no machine is taken for
// lost. A nil governor admits everything.
func intake(gov *memgov.Governor, node Node, h http.HandlerFunc) http.HandlerFunc {
	if gov == nil {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request) {
		if !gov.Admit(r.Context()) {
			if r.Context().Err() != nil {
				return
			}
			w.Header().Set("Retry-After", "1")
			writeKind(w, fault.KindUnavailable, "node %s is %s; send again in a moment", node.NodeID(), gov.Condition())
			return
		}
		h(w, r)
	}
}

var (
	descMemLimit    = prometheus.NewDesc("fixpoint_memory_limit_bytes", "The node's soft memory limit (GOMEMLIMIT, --memory-limit or the cgroup's); 0 when none.", []string{"source"}, nil)
	descMemInUse    = prometheus.NewDesc("fixpoint_memory_in_use_bytes", "Memory the Go runtime counts against the limit, as last sampled.", nil, nil)
	descMemPressure = prometheus.NewDesc("fixpoint_memory_pressure", "1 while the node is under memory pressure and slows its intake.", nil, nil)
	descIntakeHeld  = prometheus.NewDesc("fixpoint_intake_held_total", "Agent requests (work polls, results, log posts) held for their turn under memory pressure.", nil, nil)
	descIntakeShed  = prometheus.NewDesc("fixpoint_intake_refused_total", "Agent requests answered 503 under memory pressure, their turn too far off.", nil, nil)
)

// memoryCollector reports the governor's state at scrape time.
type memoryCollector struct{ gov *memgov.Governor }

func (c memoryCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descMemLimit, descMemInUse, descMemPressure, descIntakeHeld, descIntakeShed} {
		ch <- d
	}
}

func (c memoryCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.gov.Stats()
	pressure := 0.0
	if st.Under {
		pressure = 1
	}
	ch <- prometheus.MustNewConstMetric(descMemLimit, prometheus.GaugeValue, float64(st.Limit), c.gov.Limit().Source)
	ch <- prometheus.MustNewConstMetric(descMemInUse, prometheus.GaugeValue, float64(st.Used))
	ch <- prometheus.MustNewConstMetric(descMemPressure, prometheus.GaugeValue, pressure)
	ch <- prometheus.MustNewConstMetric(descIntakeHeld, prometheus.CounterValue, float64(st.Held))
	ch <- prometheus.MustNewConstMetric(descIntakeShed, prometheus.CounterValue, float64(st.Refused))
}
