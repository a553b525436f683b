package legacy

import "fmt"

// unsupported maps each Juju hook tool of a feature fixpoint has no
// counterpart for to that feature. The tools exist so that a charm calling
// one fails with a message naming the feature, rather than "command not
// found" (which ops reports as a crash deep inside the framework).
var unsupported = map[string]string{
	"pod-spec-set":       "workload containers (Kubernetes pod specs)",
	"k8s-spec-set":       "workload containers (Kubernetes pod specs)",
	"k8s-raw-set":        "workload containers (Kubernetes pod specs)",
	"payload-register":   "payloads",
	"payload-unregister": "payloads",
	"payload-status-set": "payloads",
	"add-metric":         "metrics",
}

// unsupportedTool is the server side of every tool in unsupported.
func unsupportedTool(name string) tool {
	feature := unsupported[name]
	return tool{acceptAll: true, run: func(s *session, c *call) (any, error) {
		return nil, fmt.Errorf("%s: fixpoint does not support Juju %s, which this charm uses: it runs the charm's hooks but has no counterpart for that feature; run the charm on Juju for that part", name, feature)
	}}
}
