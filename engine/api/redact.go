package api

import (
	"net/http"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/model/fault"
	"github.com/fixpoint/fixpoint/raftstore/forward"
)

// Answers people read (state, universes, units, config, logs, explain)
// carry secret values redacted (model.SecretKey, model.SecretOption,
// model.Redact), so that a credential that reads them never receives a
// password over the wire. ?reveal=1 asks for the values: the operator
// credential only, and logged.

// reveal reads ?reveal: whether the answer may hold secret values. Only
// the operator may ask; anyone else is answered 403 and ok is false. A
// reveal is logged at info with who asked for what, never the values.
func reveal(log hclog.Logger, w http.ResponseWriter, r *http.Request) (reveal, ok bool) {
	q := r.URL.Query()
	if !q.Has("reveal") {
		return false, true
	}
	switch v := q.Get("reveal"); v {
	case "", "1", "true":
	case "0", "false":
		return false, true
	default:
		writeKind(w, fault.KindBadRequest, "reveal=%q: pass reveal=1 to see secret values, or leave it out", v)
		return false, false
	}
	p := principalOf(r)
	if !p.mayReveal() {
		log.Warn("refused to reveal secrets", "method", r.Method, "path", r.URL.Path, "principal", p.String(), "remote", r.RemoteAddr)
		writeError(w, http.StatusForbidden, "%s may not see secret values (?reveal, --reveal): only the operator credential may; ask without it to see them redacted", p)
		return false, false
	}
	log.Info("revealing secret values", "method", r.Method, "path", r.URL.Path, "principal", p.String(), "remote", r.RemoteAddr, "forwarded_by", r.Header.Get(forward.Header))
	return true, true
}

// redactConfig redacts the values and defaults of sc's secret options.
func redactConfig(sc *ServiceConfig) *ServiceConfig {
	out := *sc
	out.Config = make(map[string]*ConfigValue, len(sc.Config))
	for k, cv := range sc.Config {
		if cv.Type == model.SecretType {
			c := *cv
			if c.Value != nil {
				c.Value = model.RedactAny(c.Value)
			}
			if c.Default != nil {
				c.Default = model.RedactAny(c.Default)
			}
			cv = &c
		}
		out.Config[k] = cv
	}
	return &out
}

// redactRuns redacts runs for people, each with the secrets its unit sees
// in st now.
func redactRuns(st *model.State, runs []engine.Run) []engine.Run {
	out := make([]engine.Run, len(runs))
	secrets := map[string][]string{}
	for i, run := range runs {
		sec, ok := secrets[run.Unit]
		if !ok {
			sec = st.SecretsOf(run.Unit)
			secrets[run.Unit] = sec
		}
		out[i] = run.Redacted(sec)
	}
	return out
}

// logged is r as node's log may hold it: a failed run's error with
// the secrets its unit sees taken out (the log keeps no secret).
func logged(node Node, r engine.Run) engine.Run {
	if r.Outcome != engine.RunError {
		return r
	}
	_ = node.View(func(st *model.State) error {
		r = r.Redacted(st.SecretsOf(r.Unit))
		return nil
	})
	return r
}
