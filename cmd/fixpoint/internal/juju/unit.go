package juju

import (
	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

// UnitInfo is one unit as `juju show-unit --format json` prints it.
type UnitInfo struct {
	WorkloadVersion string         `json:"workload-version,omitempty" yaml:"workload-version,omitempty"`
	Machine         string         `json:"machine,omitempty" yaml:"machine,omitempty"`
	OpenedPorts     []string       `json:"opened-ports" yaml:"opened-ports"`
	PublicAddress   string         `json:"public-address,omitempty" yaml:"public-address,omitempty"`
	Charm           string         `json:"charm" yaml:"charm"`
	Leader          bool           `json:"leader" yaml:"leader"`
	Life            string         `json:"life,omitempty" yaml:"life,omitempty"`
	RelationInfo    []RelationData `json:"relation-info,omitempty" yaml:"relation-info,omitempty"`
}

// RelationData is one relation of a unit in show-unit: the unit's own
// settings, the related application's data and each related unit's
// settings.
type RelationData struct {
	RelationID      int                         `json:"relation-id" yaml:"relation-id"`
	Endpoint        string                      `json:"endpoint" yaml:"endpoint"`
	RelatedEndpoint string                      `json:"related-endpoint" yaml:"related-endpoint"`
	ApplicationData map[string]any              `json:"application-data" yaml:"application-data"`
	LocalUnit       UnitRelationData            `json:"local-unit" yaml:"local-unit"`
	RelatedUnits    map[string]UnitRelationData `json:"related-units,omitempty" yaml:"related-units,omitempty"`
}

// UnitRelationData is one unit's settings in a relation, and whether it
// is in the relation's scope (a member, in fixpoint's words).
type UnitRelationData struct {
	InScope bool           `json:"in-scope" yaml:"in-scope"`
	Data    map[string]any `json:"data" yaml:"data"`
}

// CharmURL is the charm URL Juju shows for a local charm named name.
func CharmURL(name string) string { return "local:" + name + "-0" }

// ShowUnit is unit name of st as show-unit prints it; version is the
// workload version its service's leader set. ok is false when st has no
// such unit.
func ShowUnit(st *model.State, name, version string) (UnitInfo, bool) {
	u := st.Units[name]
	if u == nil {
		return UnitInfo{}, false
	}
	svc := st.Services[u.Service]
	charm := u.Service
	if svc != nil {
		if ch := st.Charms[svc.Charm]; ch != nil && ch.Meta.Name != "" {
			charm = ch.Meta.Name
		}
	}
	out := UnitInfo{WorkloadVersion: version, Machine: st.MachineID(u), OpenedPorts: Ports(u.Ports), PublicAddress: st.Address(u),
		Charm: CharmURL(charm), Leader: svc != nil && svc.Leader == name}
	if out.OpenedPorts == nil {
		out.OpenedPorts = []string{}
	}
	if u.Principal != "" {
		out.Machine = ""
	}
	if u.Life != model.Alive {
		out.Life = string(u.Life)
	}
	for _, r := range st.RelationsOf(u.Service) {
		ep, _ := r.Endpoint(u.Service)
		remote, _ := r.Remote(u.Service)
		rd := RelationData{RelationID: r.ID, Endpoint: ep.Name, RelatedEndpoint: remote.Name, ApplicationData: anyMap(nil),
			LocalUnit: UnitRelationData{InScope: true, Data: anyMap(nil)}}
		if b := r.App[remote.Service]; b != nil {
			rd.ApplicationData = anyMap(b.Map())
		}
		if b := u.Settings.Get(r.ID); b != nil {
			rd.LocalUnit.Data = anyMap(b.Map())
		}
		for _, m := range st.RemoteMembers(u, r) {
			if rd.RelatedUnits == nil {
				rd.RelatedUnits = map[string]UnitRelationData{}
			}
			d := UnitRelationData{InScope: true, Data: anyMap(nil)}
			if b := m.Settings.Get(r.ID); b != nil {
				d.Data = anyMap(b.Map())
			}
			rd.RelatedUnits[m.Name] = d
		}
		out.RelationInfo = append(out.RelationInfo, rd)
	}
	return out, true
}

func anyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Config is `juju config APP --format json`: the charm's settings and the
// application's own config (trust).
type Config struct {
	Application       string                 `json:"application" yaml:"application"`
	Charm             string                 `json:"charm" yaml:"charm"`
	ApplicationConfig map[string]ConfigValue `json:"application-config" yaml:"application-config"`
	Settings          map[string]ConfigValue `json:"settings" yaml:"settings"`
}

// ConfigValue is one option: its type, value, default and where the value
// comes from (user, default, or unset with no value).
type ConfigValue struct {
	Default     any    `json:"default,omitempty" yaml:"default,omitempty"`
	Description string `json:"description" yaml:"description"`
	Source      string `json:"source" yaml:"source"`
	Type        string `json:"type" yaml:"type"`
	Value       any    `json:"value,omitempty" yaml:"value,omitempty"`
}

// trustDescription is Juju's description of the trust setting.
const trustDescription = "Does this application have access to trusted credentials"

// ServiceConfig is sc, the effective config of a service with charm
// charmName, as juju config prints it; trusted is the service's trust.
// fixpoint's "set" source is Juju's "user".
func ServiceConfig(sc *api.ServiceConfig, charmName string, trusted bool) Config {
	out := Config{Application: sc.Service, Charm: charmName, Settings: map[string]ConfigValue{},
		ApplicationConfig: map[string]ConfigValue{"trust": {Default: false, Description: trustDescription, Source: "default", Type: "bool", Value: trusted}}}
	if trusted {
		out.ApplicationConfig["trust"] = ConfigValue{Default: false, Description: trustDescription, Source: "user", Type: "bool", Value: true}
	}
	for k, cv := range sc.Config {
		v := ConfigValue{Default: cv.Default, Description: cv.Description, Source: cv.Source, Type: cv.Type, Value: cv.Value}
		switch cv.Source {
		case "set":
			v.Source = "user"
		case "unset":
			v.Value = nil
		}
		if v.Type == "?" {
			// A key the charm no longer declares: Juju keeps no such key.
			continue
		}
		if f, ok := v.Value.(float64); ok && v.Type == "int" {
			v.Value = int64(f)
		}
		if f, ok := v.Default.(float64); ok && v.Type == "int" {
			v.Default = int64(f)
		}
		out.Settings[k] = v
	}
	return out
}
