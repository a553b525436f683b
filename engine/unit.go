package engine

import (
	"fmt"
	"strings"

	"github.com/fixpoint/fixpoint/model"
)

// UnitDetail is one unit as `fixpoint show-unit` and the dashboard's
// panel show it: its line in status, its address, what it takes part in
// and its private state.
type UnitDetail struct {
	Unit string `json:"unit"`
	UnitStatus
	Address   string            `json:"address,omitempty"`
	Relations []*UnitRelation   `json:"relations"`
	State     map[string]string `json:"state"`
	// Resources are the digests of its service's resource files by name.
	Resources map[string]string `json:"resources,omitempty"`
}

// UnitRelation is one relation as a unit takes part in it: the units it
// sees there and the settings it wrote.
type UnitRelation struct {
	ID        int               `json:"id"`
	Endpoint  string            `json:"endpoint"`
	Remote    string            `json:"remote"`
	Interface string            `json:"interface"`
	Members   []string          `json:"remote_units"`
	Settings  map[string]string `json:"settings"`
}

// NewUnitDetail is unit name's detail from the state and its line in
// status. A CLI that meets a control plane without GET /v1/units makes it
// from the whole state and status it read.
func NewUnitDetail(st *model.State, name string, us *UnitStatus) *UnitDetail {
	u := st.Units[name]
	d := &UnitDetail{Unit: name, Address: st.Address(u), State: u.State, Relations: []*UnitRelation{}}
	if svc := st.Services[u.Service]; svc != nil {
		d.Resources = svc.Resources
	}
	if us != nil {
		d.UnitStatus = *us
	} else {
		// A status without the unit (read before it was added): what the
		// state alone says.
		d.UnitStatus = UnitStatus{Service: u.Service, Machine: u.Machine, Life: string(u.Life), Status: u.Status, Reconciles: u.Reconciles, Ports: u.Ports}
	}
	if d.State == nil {
		d.State = map[string]string{}
	}
	for _, r := range st.RelationsOf(u.Service) {
		ep, _ := r.Endpoint(u.Service)
		remote, _ := r.Remote(u.Service)
		ur := &UnitRelation{ID: r.ID, Endpoint: ep.Name, Remote: remote.String(), Interface: r.Interface, Members: []string{}, Settings: map[string]string{}}
		for _, m := range st.RemoteMembers(u, r) {
			ur.Members = append(ur.Members, m.Name)
		}
		if data := u.Settings.Get(r.ID).Map(); data != nil {
			ur.Settings = data
		}
		d.Relations = append(d.Relations, ur)
	}
	return d
}

// ErrNotFound is what a lookup of a unit that is not there is (errors.Is):
// model's, which the error envelope and so the API and its client use, so
// that one sentinel says "not found" on both sides of the wire.
var ErrNotFound = model.ErrNotFound

// notFound is a lookup that found nothing; its message says what is
// there instead.
type notFound string

func (e notFound) Error() string      { return string(e) }
func (notFound) Is(target error) bool { return target == ErrNotFound }

// NoUnitError explains a name that is not a unit of st: a service gets
// its units listed, anything else the form units take.
func NoUnitError(st *model.State, name string) error {
	if _, ok := st.Services[name]; ok {
		var units []string
		for _, u := range st.UnitsOf(name) {
			units = append(units, u.Name)
		}
		if len(units) == 0 {
			return notFound(fmt.Sprintf("%s is a service, with no units yet", name))
		}
		return notFound(fmt.Sprintf("%s is a service; its units are %s", name, Some(units, 10)))
	}
	return notFound(fmt.Sprintf("no unit %s in the environment (units look like SERVICE/N, e.g. web/0)", model.Quote(name, 80)))
}

// Some lists names for a message, the first n of them and how many more:
// an error about a large environment stays a line.
func Some(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

// Redacted is d for people: the secret keys of its relation settings and
// its state redacted. d is not changed.
func (d *UnitDetail) Redacted() *UnitDetail {
	out := *d
	out.State = model.RedactBag(d.State)
	out.Relations = make([]*UnitRelation, len(d.Relations))
	for i, r := range d.Relations {
		c := *r
		c.Settings = model.RedactBag(r.Settings)
		out.Relations[i] = &c
	}
	return &out
}
