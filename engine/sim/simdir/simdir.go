// Package simdir gives simulations (engine/sim) what comes from disk:
// charm directories, read as fixpoint reads them (charm.cue, or
// metadata.yaml and config.yaml, checked by the CUE schemas) and packed
// and unpacked as it packs them; old-hook charms, run through the legacy
// adapter; and environment files. engine/sim itself needs none of it, so
// a simulation of hooks given in Go builds without the CUE evaluator.
package simdir

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/fixpoint/fixpoint/engine/charm"
	"github.com/fixpoint/fixpoint/engine/sim"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/schemas"
)

// NewEnv returns an empty environment that deploys charm directories
// (Env.Deploy) as well as charms given by their metadata.
func NewEnv(name string) *sim.Env { return sim.NewEnvWithCharms(name, &reader{}) }

// reader is the sim.CharmReader of charm directories. metas holds the
// metadata already read, by absolute directory.
type reader struct {
	mu    sync.Mutex
	metas map[string]*model.CharmMeta
}

func (r *reader) Meta(dir string) (*model.CharmMeta, error) {
	r.mu.Lock()
	meta := r.metas[dir]
	r.mu.Unlock()
	if meta != nil {
		return meta, nil
	}
	return schemas.LoadCharmMeta(dir)
}

func (r *reader) Open(dir, workDir, toolsBinary string) (sim.Hook, string, bool, error) {
	h, p, err := Open(dir, workDir, toolsBinary)
	if err != nil {
		return nil, "", false, err
	}
	return h, p.Hash, p.Legacy, nil
}

// LoadEnv loads an environment from CUE files (as `fixpoint up -f` does),
// checking it and every charm it names, with every problem at its
// file:line:col. Nothing is built or packed until Simulate needs a hook.
func LoadEnv(paths ...string) (*sim.Env, error) {
	checked, err := charm.Check(paths...)
	if err != nil {
		return nil, err
	}
	ev := checked.Env.Env
	r := &reader{metas: map[string]*model.CharmMeta{}}
	e := sim.NewEnvWithCharms(ev.Name, r)
	for name, spec := range ev.Services {
		dir := checked.Dirs[name]
		meta := checked.Metas[dir]
		if meta == nil {
			return nil, fmt.Errorf("service %s: charm %s was not loaded", name, spec.Charm)
		}
		r.metas[dir] = meta
		s := e.Deploy(name, dir).Placement(spec.Placement...)
		if spec.Units != nil {
			s.Units(*spec.Units)
		}
		// Check read each file and took its digest, as vet and plan do.
		for n, digest := range spec.ResourceDigests {
			s.Resource(n, checked.Resources[digest])
		}
		for k, v := range spec.Config {
			s.Config(k, v)
		}
		if want, ok := checked.Env.Expect[name]; ok {
			s.Expect(want)
		}
	}
	for name, ends := range ev.Relations {
		e.RelateAs(name, ends[0], ends[1])
	}
	return e, nil
}

// ForCharms makes an environment to test the charms in dirs together: one
// service per charm, named after it, with units units each (subordinate
// charms get theirs from their principals), and a relation between every
// provides and requires endpoint of two different charms that speak the
// same interface (a container-scoped juju-info requirer is related to
// every principal's implicit juju-info). Describe prints what it made.
func ForCharms(units int, dirs ...string) (*sim.Env, error) {
	if len(dirs) == 0 {
		return nil, errors.New("name at least one charm directory")
	}
	r := &reader{metas: map[string]*model.CharmMeta{}}
	e := sim.NewEnvWithCharms("charm-test", r)
	var order []string
	metas := map[string]*model.CharmMeta{}
	for _, dir := range dirs {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, err
		}
		meta, err := schemas.LoadCharmMeta(abs)
		if err != nil {
			return nil, err
		}
		if prev, dup := metas[meta.Name]; dup {
			return nil, fmt.Errorf("two charms are named %q (%s and %s); test them one at a time or write an environment file", meta.Name, e.CharmDir(prev.Name), dir)
		}
		metas[meta.Name], r.metas[abs] = meta, meta
		s := e.Deploy(meta.Name, abs)
		if meta.Subordinate {
			s.Units(0)
		} else {
			s.Units(units)
		}
		order = append(order, meta.Name)
	}
	for i, a := range order {
		for _, b := range order[i+1:] {
			ma, mb := metas[a], metas[b]
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
