package api

import (
	"net/http"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/model/fault"
)

// Events is the answer of GET /v1/events.
type Events struct {
	// Last is the number of the last event read; ask for events after it
	// to follow.
	Last   uint64        `json:"last"`
	Events []model.Event `json:"events"`
}

// events serves GET /v1/events?of=UNIT|SERVICE&after=SEQ&tail=N&wait=D:
// the unit events (model/events.go) of a unit, of a service's units, or
// of all units of the request's environment, oldest first. Like the debug log, they are replicated:
// any node answers from its own copy. Secret values the unit sees are
// scrubbed from what is shown (a failed hook's error may print one).
func (s *diagAPI) events(w http.ResponseWriter, r *http.Request) {
	s = s.in(r)
	d, ok := s.diagnostics(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	of := q.Get("of")
	env := envOf(r)
	unitOK := func(string) bool { return true }
	switch {
	case of == "":
	case model.CheckUnitName(of) == nil:
		unitOK = func(u string) bool { return u == of }
	case model.CheckName(model.KindService, of) == nil:
		unitOK = func(u string) bool { return model.ServiceOf(u) == of }
	default:
		writeKind(w, fault.KindBadRequest, "events of %s: name a unit (service/N) or a service", model.Quote(of, 24))
		return
	}
	// The request's environment's events alone: another's units may
	// have the same names.
	keyOK := func(k string) bool {
		u, ok := keyInEnv(k, env)
		return ok && unitOK(u)
	}
	rq, ok := readQuery(w, q)
	if !ok {
		return
	}
	reveal, ok := reveal(s.log, w, r)
	if !ok {
		return
	}
	evs, last := waitRead(r.Context(), d.EventStore(), rq, keyOK, nil)
	if !reveal && len(evs) > 0 {
		secrets := map[string][]string{}
		_ = s.node.View(func(st *model.State) error {
			for i := range evs {
				u := evs[i].Unit
				if _, done := secrets[u]; !done {
					secrets[u] = st.SecretsOf(u)
				}
				evs[i].Message = model.Scrub(evs[i].Message, secrets[u])
			}
			return nil
		})
	}
	writeJSON(w, http.StatusOK, Events{Last: last, Events: nonNil(evs)})
}

// keyInEnv says whether a key of the debug-log or event store is of
// environment env ("" the default one), and what it names there. Another
// environment's unit is keyed "ENV/svc/N", with two slashes; a unit of
// the default environment, a machine ("machine/M") and a node
// ("node/N") with one: machines and nodes are the default
// environment's to show, as a v0.3.0 server shows them.
func keyInEnv(key, env string) (string, bool) {
	e := model.EnvOfKey(key)
	if e == "" {
		return key, env == ""
	}
	return key[len(e)+1:], e == env
}
