package api

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/model/fault"
)

// The reads of one unit or one service, for `show-unit` and `config`.
// They answer from the leader's state, at a cost that grows with the unit
// or service asked about, not with the environment: a client never reads
// the whole state (or the full status) for one unit's lines.

// ConfigValue is one option of a service as `fixpoint config` shows it.
type ConfigValue struct {
	Type        string `json:"type"`
	Value       any    `json:"value"`
	Default     any    `json:"default,omitempty"`
	Source      string `json:"source"` // "set", "default" or "unset"
	Description string `json:"description,omitempty"`
}

// ServiceConfig is a service's effective config: the answer of GET
// /v1/services/{service}/config.
type ServiceConfig struct {
	Service string                  `json:"service"`
	Charm   string                  `json:"charm"`
	Config  map[string]*ConfigValue `json:"config"`
}

// unit answers GET /v1/units/{unit...}: engine.UnitDetail. A service's
// name is answered with its units (404), so that a CLI given one can say
// which to ask for.
func (s *statusAPI) unit(w http.ResponseWriter, r *http.Request) {
	s, ok := s.in(w, r)
	if !ok {
		return
	}
	name := r.PathValue("unit")
	check := model.CheckUnitName
	if !strings.Contains(name, "/") {
		check = func(n string) error { return model.CheckName(model.KindService, n) }
	}
	if err := check(name); err != nil {
		writeKind(w, fault.KindBadRequest, "%v", err)
		return
	}
	reveal, ok := reveal(s.log, w, r)
	if !ok || !s.gate.read(w, r) {
		return
	}
	d, err := s.ctl.Unit(name)
	if errors.Is(err, engine.ErrNotFound) {
		writeKind(w, fault.KindNotFound, "%v", err)
		return
	}
	if err != nil {
		writeStoreError(w, err, "unit "+name)
		return
	}
	if !reveal {
		d = d.Redacted()
	}
	writeCompact(w, http.StatusOK, d)
}

// serviceConfig answers GET /v1/services/{service}/config.
func (s *statusAPI) serviceConfig(w http.ResponseWriter, r *http.Request) {
	s, ok := s.in(w, r)
	if !ok {
		return
	}
	name := r.PathValue("service")
	if err := model.CheckName(model.KindService, name); err != nil {
		writeKind(w, fault.KindBadRequest, "%v", err)
		return
	}
	reveal, ok := reveal(s.log, w, r)
	if !ok || !s.gate.read(w, r) {
		return
	}
	var sc *ServiceConfig
	var err error
	_ = s.node.View(func(st *model.State) error {
		sc, err = NewServiceConfig(st, name)
		return nil
	})
	if err != nil {
		writeKind(w, fault.KindNotFound, "%v", err)
		return
	}
	if !reveal {
		sc = redactConfig(sc)
	}
	writeCompact(w, http.StatusOK, sc)
}

// NewServiceConfig is the config of service svc with the source of each
// value; an option holding exactly its default counts as a default. A
// CLI that meets a control plane without GET /v1/services makes it from
// the whole state it read.
func NewServiceConfig(st *model.State, svc string) (*ServiceConfig, error) {
	s := st.Services[svc]
	if s == nil {
		return nil, fmt.Errorf("no service %s in the environment (services: %s)", model.Quote(svc, model.MaxNameLen), engine.Some(slices.Sorted(maps.Keys(st.Services)), 20))
	}
	sc := &ServiceConfig{Service: svc, Charm: s.Charm, Config: map[string]*ConfigValue{}}
	var opts map[string]model.Option
	if ch := st.Charms[s.Charm]; ch != nil {
		opts = ch.Meta.Options
		sc.Charm = ch.Meta.Name + " " + model.ShortHash(s.Charm)
	}
	for k, o := range opts {
		cv := &ConfigValue{Type: o.Type, Description: o.Description, Source: "unset"}
		var def any
		if o.Default != nil {
			if v, err := model.ConvertOption(o.Type, o.Default); err == nil {
				def, cv.Default = v, v
			}
		}
		if v, ok := s.Config[k]; ok {
			cv.Value, cv.Source = v, "set"
			if def != nil && sameValue(v, def) {
				cv.Source = "default"
			}
		}
		sc.Config[k] = cv
	}
	for k, v := range s.Config {
		if _, ok := sc.Config[k]; !ok {
			sc.Config[k] = &ConfigValue{Type: "?", Value: v, Source: "set"}
		}
	}
	return sc, nil
}

// sameValue compares config values as their JSON forms would: numbers
// decoded from the state are float64 where a default may be int.
func sameValue(a, b any) bool {
	return reflect.DeepEqual(a, b) || fmt.Sprint(a) == fmt.Sprint(b)
}

// IsUnknownRoute says whether err is a control plane's answer that it has
// no such endpoint (an older version's router), as against a lookup that
// found nothing, which names what it looked for: the CLI then does on its
// side what the newer endpoint would have.
func IsUnknownRoute(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusNotFound && e.Message == "404 page not found"
}
