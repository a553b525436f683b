package model

import (
	"fmt"
	"sort"
)

// Role is the part an endpoint plays in a relation.
type Role string

// Endpoint roles.
const (
	Provides Role = "provides"
	Requires Role = "requires"
	Peer     Role = "peer"
)

// Scope limits which remote units a unit sees over a relation.
type Scope string

// Relation scopes.
const (
	Global    Scope = "global"
	Container Scope = "container"
)

// JujuInfo is the endpoint every charm provides implicitly.
const JujuInfo = "juju-info"

// Endpoint is one relation endpoint a charm declares.
type Endpoint struct {
	Interface string `json:"interface"`
	Scope     Scope  `json:"scope,omitempty"`
	Limit     int    `json:"limit,omitempty"`
}

// Option is one config option a charm declares.
type Option struct {
	Type        string `json:"type"`
	Default     any    `json:"default,omitempty"`
	Description string `json:"description,omitempty"`
}

// CharmMeta is what a charm declares about itself: charm.cue, or an old
// charm's metadata.yaml and config.yaml, decoded to one shape.
type CharmMeta struct {
	Name        string              `json:"name"`
	Summary     string              `json:"summary,omitempty"`
	Subordinate bool                `json:"subordinate,omitempty"`
	Provides    map[string]Endpoint `json:"provides,omitempty"`
	Requires    map[string]Endpoint `json:"requires,omitempty"`
	Peers       map[string]Endpoint `json:"peers,omitempty"`
	Options     map[string]Option   `json:"options,omitempty"`
	// Resources are the files the charm declares, by name.
	Resources map[string]Resource `json:"resources,omitempty"`
	// Storage are the stores the charm declares (storage.go).
	Storage map[string]StorageMeta `json:"storage,omitempty"`
	// Actions are the actions the charm declares (actions.yaml).
	Actions map[string]ActionSpec `json:"actions,omitempty"`
}

// Charm is a packed charm known to the control plane. The archive itself
// lives outside the log, addressed by Hash.
type Charm struct {
	Hash   string    `json:"hash"`
	Source string    `json:"source,omitempty"`
	Size   int64     `json:"size,omitempty"`
	Meta   CharmMeta `json:"meta"`
	// Legacy is true when the charm has no hooks/reconcile and runs
	// through the old-hook adapter.
	Legacy bool `json:"legacy,omitempty"`
}

// EndpointSpec is an endpoint together with its name and role.
type EndpointSpec struct {
	Name string
	Role Role
	Endpoint
}

// Endpoint returns the named endpoint, including the implicit juju-info.
func (m *CharmMeta) Endpoint(name string) (EndpointSpec, bool) {
	if e, ok := m.Provides[name]; ok {
		return EndpointSpec{name, Provides, e.normal()}, true
	}
	if e, ok := m.Requires[name]; ok {
		return EndpointSpec{name, Requires, e.normal()}, true
	}
	if e, ok := m.Peers[name]; ok {
		return EndpointSpec{name, Peer, e.normal()}, true
	}
	if name == JujuInfo {
		return EndpointSpec{JujuInfo, Provides, Endpoint{Interface: JujuInfo, Scope: Global}}, true
	}
	return EndpointSpec{}, false
}

// Endpoints lists every endpoint, juju-info included, sorted by name.
func (m *CharmMeta) Endpoints() []EndpointSpec {
	var out []EndpointSpec
	for _, set := range []struct {
		role Role
		eps  map[string]Endpoint
	}{{Provides, m.Provides}, {Requires, m.Requires}, {Peer, m.Peers}} {
		for n, e := range set.eps {
			out = append(out, EndpointSpec{n, set.role, e.normal()})
		}
	}
	if _, ok := m.Provides[JujuInfo]; !ok {
		out = append(out, EndpointSpec{JujuInfo, Provides, Endpoint{Interface: JujuInfo, Scope: Global}})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// EndpointNames lists endpoint names, for error messages.
func (m *CharmMeta) EndpointNames() []string {
	var names []string
	for _, e := range m.Endpoints() {
		names = append(names, e.Name)
	}
	return names
}

func (e Endpoint) normal() Endpoint {
	if e.Scope == "" {
		e.Scope = Global
	}
	return e
}

// Validate checks the metadata's own consistency.
func (m *CharmMeta) Validate() error {
	if m.Name == "" {
		return fmt.Errorf("charm has no name")
	}
	if err := CheckName(KindCharm, m.Name); err != nil {
		return err
	}
	seen := map[string]Role{}
	for _, set := range []struct {
		role Role
		eps  map[string]Endpoint
	}{{Provides, m.Provides}, {Requires, m.Requires}, {Peer, m.Peers}} {
		for n, e := range set.eps {
			if prev, dup := seen[n]; dup {
				return fmt.Errorf("charm %s: endpoint %q is declared under both %s and %s", m.Name, n, prev, set.role)
			}
			seen[n] = set.role
			if err := CheckName(KindEndpoint, n); err != nil {
				return fmt.Errorf("charm %s: %w", m.Name, err)
			}
			if err := CheckName(KindInterface, e.Interface); e.Interface != "" && err != nil {
				return fmt.Errorf("charm %s: endpoint %s: %w", m.Name, n, err)
			}
			if e.Interface == "" {
				return fmt.Errorf("charm %s: endpoint %q has no interface", m.Name, n)
			}
			if e.Scope != "" && e.Scope != Global && e.Scope != Container {
				return fmt.Errorf("charm %s: endpoint %q has scope %q; use global or container", m.Name, n, e.Scope)
			}
			if e.Limit < 0 {
				return fmt.Errorf("charm %s: endpoint %q has negative limit %d", m.Name, n, e.Limit)
			}
		}
	}
	if err := m.checkResources(); err != nil {
		return err
	}
	if err := m.validateStorage(); err != nil {
		return err
	}
	for n, o := range m.Options {
		if err := CheckName(KindConfigKey, n); err != nil {
			return fmt.Errorf("charm %s: %w", m.Name, err)
		}
		switch o.Type {
		case "string", "int", "float", "boolean", "secret":
		default:
			return fmt.Errorf("charm %s: option %q has type %q; use string, int, float, boolean or secret", m.Name, n, o.Type)
		}
		if o.Default != nil {
			if _, err := ConvertOption(o.Type, o.Default); err != nil {
				return fmt.Errorf("charm %s: option %q default: %w", m.Name, n, err)
			}
		}
	}
	return nil
}

// ConvertOption checks v against an option type and returns it in the
// canonical Go form the state keeps (string, int64, float64, bool). JSON
// numbers arrive as float64 and are accepted for int when integral.
func ConvertOption(typ string, v any) (any, error) {
	switch typ {
	case "string", "secret":
		// A secret option holds a string that hooks get as it is and
		// people see redacted (SecretOption); a wrong value is not
		// printed in the error either.
		if s, ok := v.(string); ok {
			return s, nil
		}
		if typ == SecretType {
			return nil, fmt.Errorf("a value of type %s is not of type secret (a string)", jsonType(v))
		}
	case "boolean":
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case "int":
		switch n := v.(type) {
		case int:
			return int64(n), nil
		case int64:
			return n, nil
		case float64:
			if n == float64(int64(n)) {
				return int64(n), nil
			}
		}
	case "float":
		switch n := v.(type) {
		case int:
			return float64(n), nil
		case int64:
			return float64(n), nil
		case float64:
			return n, nil
		}
	}
	return nil, fmt.Errorf("value %v (%s) is not of type %s", v, jsonType(v), typ)
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case int, int64:
		return "int"
	case float64:
		return "number"
	case nil:
		return "null"
	case map[string]any:
		return "struct"
	case []any:
		return "list"
	}
	return fmt.Sprintf("%T", v)
}
