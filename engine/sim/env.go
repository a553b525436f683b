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

	"github.com/fixpoint/fixpoint/model"
)

// Env is an environment to simulate: services, their charms, unit counts,
// config and relations, and the hooks that reconcile their units. Build
// one with NewEnv and DeployMeta/Relate and register the hooks with Hook;
// an Env that reads charm directories (Deploy) comes from package simdir,
// which also loads environment files.
//
//	env := simdir.NewEnv("shop")
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
	charms    CharmReader
	errs      []error
}

// CharmReader reads charm directories for an Env: a charm's metadata when
// a service is deployed from its directory, and its own hook when a
// simulation runs a service with no hook registered. Package simdir's
// reads charm.cue or metadata.yaml and packs the charm as fixpoint does;
// it is apart so that a simulation of hooks given in Go builds without
// the CUE evaluator.
type CharmReader interface {
	// Meta reads the metadata of the charm in dir.
	Meta(dir string) (*model.CharmMeta, error)
	// Open makes the hook of the charm in dir, unpacked under workDir (a
	// directory of the simulation's): the hook, the packed charm's hash
	// and whether it runs old hooks. toolsBinary is Options.ToolsBinary.
	Open(dir, workDir, toolsBinary string) (h Hook, hash string, legacy bool, err error)
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
	expect    *model.Expect
	// resources are the files of the resources the service is given
	// (absolute paths) and digests their sha256, by resource name.
	resources map[string]string
	digests   map[string]string
}

// NewEnv returns an empty environment whose charms are given by their
// metadata (DeployMeta).
func NewEnv(name string) *Env { return NewEnvWithCharms(name, nil) }

// NewEnvWithCharms returns an empty environment that reads charm
// directories with charms (Deploy); package simdir makes these.
func NewEnvWithCharms(name string, charms CharmReader) *Env {
	return &Env{name: name, services: map[string]*Service{}, relations: map[string][]string{}, hooks: map[string]Hook{}, charms: charms}
}

// Deploy adds a service running the charm in directory charmDir (its
// charm.cue, or metadata.yaml and config.yaml), with one unit. A charm
// that cannot be read, or an Env that reads no charm directories (one
// from NewEnv), is reported by Simulate.
func (e *Env) Deploy(service, charmDir string) *Service {
	s := &Service{env: e, name: service, units: 1, config: map[string]any{}}
	e.services[service] = s
	abs, err := filepath.Abs(charmDir)
	if err != nil {
		e.errs = append(e.errs, err)
		return s
	}
	s.dir = abs
	if e.charms == nil {
		e.errs = append(e.errs, fmt.Errorf("service %s: this environment reads no charm directories (%s): make it with simdir.NewEnv, or charmdir.NewEnv in a charm's test, or give the charm's metadata with DeployMeta", service, charmDir))
		return s
	}
	meta, err := e.charms.Meta(abs)
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

// RelateAs relates two endpoints under a relation name of its own, as an
// environment file's relations: {name: [a, b]} does.
func (e *Env) RelateAs(name, a, b string) *Env {
	e.relations[name] = []string{a, b}
	return e
}

// Hook registers the hook that reconciles the units of a service; name is
// the service's name or its charm's name (the service name wins).
func (e *Env) Hook(name string, h Hook) *Env {
	e.hooks[name] = h
	return e
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
