package sim

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/fixpoint/fixpoint/engine/charm"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/schemas"
)

// Env is an environment to simulate: services, their charms, unit counts,
// config and relations, and the hooks that reconcile their units. Build
// one with NewEnv and Deploy/Relate, or load an environment file with
// LoadEnv; register Go reconcile functions with Hook.
//
//	env := sim.NewEnv("shop")
//	env.Deploy("db", "../../db").Units(2)
//	env.Deploy("web", "..").Units(2).Config("port", 8080)
//	env.Relate("web:db", "db:db")
//	env.Hook("web", sim.Func(reconcile))
//	report := env.Simulate(t.Context(), sim.Options{Schedules: 50})
//
// A service whose hook is not registered runs its charm's own hook, packed
// and unpacked as fixpoint does it, as a real process.
type Env struct {
	name      string
	services  map[string]*Service
	relations map[string][]string
	hooks     map[string]Hook
	errs      []error
}

// Service is one service of an Env; its methods set how it is deployed.
type Service struct {
	env       *Env
	name      string
	dir       string // charm directory, or "" for a charm given by metadata
	meta      *model.CharmMeta
	units     int
	config    map[string]any
	placement []string
	expect    *schemas.Expect
	// resources are the files of the resources the service is given
	// (absolute paths) and digests their sha256, by resource name.
	resources map[string]string
	digests   map[string]string
}

// NewEnv returns an empty environment.
func NewEnv(name string) *Env {
	return &Env{name: name, services: map[string]*Service{}, relations: map[string][]string{}, hooks: map[string]Hook{}}
}

// Deploy adds a service running the charm in directory charmDir (its
// charm.cue, or metadata.yaml and config.yaml), with one unit. A charm
// that cannot be read is reported by Simulate.
func (e *Env) Deploy(service, charmDir string) *Service {
	s := &Service{env: e, name: service, units: 1, config: map[string]any{}}
	e.services[service] = s
	abs, err := filepath.Abs(charmDir)
	if err != nil {
		e.errs = append(e.errs, err)
		return s
	}
	s.dir = abs
	meta, err := schemas.LoadCharmMeta(abs)
	if err != nil {
		e.errs = append(e.errs, fmt.Errorf("service %s: %w", service, err))
		return s
	}
	s.meta = meta
	return s
}

// DeployMeta adds a service whose charm is given by its metadata alone;
// its hook must be registered with Hook.
func (e *Env) DeployMeta(service string, meta model.CharmMeta) *Service {
	s := &Service{env: e, name: service, units: 1, config: map[string]any{}, meta: &meta}
	e.services[service] = s
	return s
}

// Units sets the service's unit count.
func (s *Service) Units(n int) *Service { s.units = n; return s }

// Config sets one config option (checked against the charm's options
// like the control plane does, defaults filled in for the others).
func (s *Service) Config(name string, value any) *Service { s.config[name] = value; return s }

// Placement pins the service's units to machines, round robin; the
// machines must be among Options.Machines to be registered.
func (s *Service) Placement(machines ...string) *Service { s.placement = machines; return s }

// Relate relates two endpoints, "service:endpoint" or just "service"
// where only one endpoint fits, as in an environment file. Peer relations
// are created for every peers endpoint without asking.
func (e *Env) Relate(a, b string) *Env {
	// Named as an environment file would: "web-db", then "web-db-2", ...
	svc := func(ep string) string { s, _, _ := strings.Cut(ep, ":"); return s }
	base := svc(a) + "-" + svc(b)
	name := base
	for i := 2; e.relations[name] != nil; i++ {
		name = fmt.Sprintf("%s-%d", base, i)
	}
	e.relations[name] = []string{a, b}
	return e
}

// Hook registers the hook that reconciles the units of a service; name is
// the service's name or its charm's name (the service name wins).
func (e *Env) Hook(name string, h Hook) *Env {
	e.hooks[name] = h
	return e
}

// LoadEnv loads an environment from CUE files (as `fixpoint up -f` does),
// checking it and every charm it names, with every problem at its
// file:line:col. Nothing is built or packed until Simulate needs a hook.
func LoadEnv(paths ...string) (*Env, error) {
	checked, err := charm.Check(paths...)
	if err != nil {
		return nil, err
	}
	ev := checked.Env.Env
	e := NewEnv(ev.Name)
	for name, spec := range ev.Services {
		dir := checked.Dirs[name]
		meta := checked.Metas[dir]
		if meta == nil {
			return nil, fmt.Errorf("service %s: charm %s was not loaded", name, spec.Charm)
		}
		s := &Service{env: e, name: name, dir: dir, meta: meta, units: 1, config: map[string]any{}, placement: spec.Placement}
		if spec.Units != nil {
			s.units = *spec.Units
		}
		// Check read each file and took its digest, as vet and plan do.
		for n, digest := range spec.ResourceDigests {
			if s.resources == nil {
				s.resources, s.digests = map[string]string{}, map[string]string{}
			}
			s.resources[n], s.digests[n] = checked.Resources[digest], digest
		}
		for k, v := range spec.Config {
			s.config[k] = v
		}
		if want, ok := checked.Env.Expect[name]; ok {
			s.expect = &want
		}
		e.services[name] = s
	}
	for name, ends := range ev.Relations {
		e.relations[name] = append([]string(nil), ends...)
	}
	return e, nil
}

// Name is the environment's name.
func (e *Env) Name() string { return e.name }

// Services lists the service names, sorted.
func (e *Env) Services() []string {
	names := make([]string, 0, len(e.services))
	for n := range e.services {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Service returns the service of that name, or nil.
func (e *Env) Service(name string) *Service { return e.services[name] }

// CharmDir returns the charm directory of a service, or "".
func (e *Env) CharmDir(service string) string {
	if s := e.services[service]; s != nil {
		return s.dir
	}
	return ""
}

// hookFor returns the registered hook of a service, if any.
func (e *Env) hookFor(s *Service) Hook {
	if h, ok := e.hooks[s.name]; ok {
		return h
	}
	if s.meta != nil {
		if h, ok := e.hooks[s.meta.Name]; ok {
			return h
		}
	}
	return nil
}

func (e *Env) err() error { return errors.Join(e.errs...) }

// ForCharms makes an environment to test the charms in dirs together: one
// service per charm, named after it, with units units each (subordinate
// charms get theirs from their principals), and a relation between every
// provides and requires endpoint of two different charms that speak the
// same interface (a container-scoped juju-info requirer is related to
// every principal's implicit juju-info). Describe prints what it made.
func ForCharms(units int, dirs ...string) (*Env, error) {
	if len(dirs) == 0 {
		return nil, errors.New("name at least one charm directory")
	}
	e := NewEnv("charm-test")
	var order []string
	for _, dir := range dirs {
		meta, err := schemas.LoadCharmMeta(dir)
		if err != nil {
			return nil, err
		}
		if prev, dup := e.services[meta.Name]; dup {
			return nil, fmt.Errorf("two charms are named %q (%s and %s); test them one at a time or write an environment file", meta.Name, prev.dir, dir)
		}
		s := e.Deploy(meta.Name, dir)
		if meta.Subordinate {
			s.Units(0)
		} else {
			s.Units(units)
		}
		order = append(order, meta.Name)
	}
	if err := e.err(); err != nil {
		return nil, err
	}
	for i, a := range order {
		for _, b := range order[i+1:] {
			ma, mb := e.services[a].meta, e.services[b].meta
			for _, x := range ma.Endpoints() {
				for _, y := range mb.Endpoints() {
					if fits(ma, x, mb, y) || fits(mb, y, ma, x) {
						e.Relate(a+":"+x.Name, b+":"+y.Name)
					}
				}
			}
		}
	}
	return e, nil
}

// fits says whether endpoint x of charm ma requires what y of mb provides.
func fits(ma *model.CharmMeta, x model.EndpointSpec, mb *model.CharmMeta, y model.EndpointSpec) bool {
	if x.Role != model.Requires || y.Role != model.Provides || x.Interface != y.Interface {
		return false
	}
	if y.Name == model.JujuInfo {
		// Everything provides juju-info; only subordinates attaching to a
		// principal want it.
		return ma.Subordinate && !mb.Subordinate && x.Scope == model.Container
	}
	return x.Name != model.JujuInfo
}

// Describe prints the environment as an environment file would declare
// it, so that it can be copied into one and changed.
func (e *Env) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: %q\nname:       %q\nservices: {\n", model.APIVersion, e.name)
	for _, name := range e.Services() {
		s := e.services[name]
		dir := s.dir
		if wd, err := os.Getwd(); err == nil {
			if rel, err := filepath.Rel(wd, dir); err == nil && !strings.HasPrefix(rel, "..") {
				dir = "./" + rel
			}
		}
		fmt.Fprintf(&b, "\t%q: {charm: %q", name, dir)
		if s.meta == nil || !s.meta.Subordinate {
			fmt.Fprintf(&b, ", units: %d", s.units)
		}
		if len(s.resources) > 0 {
			b.WriteString(", resources: {")
			for i, n := range slices.Sorted(maps.Keys(s.resources)) {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%q: %q", n, s.resources[n])
			}
			b.WriteString("}")
		}
		b.WriteString("}\n")
	}
	b.WriteString("}\n")
	if len(e.relations) > 0 {
		b.WriteString("relations: {\n")
		for _, name := range slices.Sorted(maps.Keys(e.relations)) {
			ends := e.relations[name]
			fmt.Fprintf(&b, "\t%q: [%q, %q]\n", name, ends[0], ends[1])
		}
		b.WriteString("}\n")
	}
	return b.String()
}
