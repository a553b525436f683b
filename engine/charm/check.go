package charm

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/schemas"
)

// Checked is an environment with every charm it names loaded, and the
// whole checked by model.Resolve.
type Checked struct {
	// Env is the loaded environment; each service's CharmHash is set.
	Env *schemas.Env
	// Metas holds each charm's metadata by absolute charm directory.
	Metas map[string]*model.CharmMeta
	// Dirs holds each service's charm directory, where its reference
	// led: beside the environment, extracted from an archive, or in the
	// charm repository.
	Dirs map[string]string
	// Charms are the charms by hash, as model.Resolve and the control
	// plane take them. Without packing the hashes are placeholders.
	Charms map[string]*model.Charm
	// Packed holds each packed charm by absolute directory; empty
	// unless the charms were packed.
	Packed map[string]*Packed
	// Resources holds each resource file the services name, by digest:
	// what the CLI uploads.
	Resources map[string]string
	// Outside lists the resource files outside the environment's
	// directory that Options.AllowOutside let in, sorted: plan names
	// them.
	Outside []OutsideResource
	// Desired is the resolved environment.
	Desired *model.Desired
	// Warnings name Juju features the charms declare that fixpoint has
	// no counterpart for (schemas.JujuFeatures): not errors, since the
	// charms run, but worth knowing before a hook fails on one.
	Warnings []schemas.Problem
}

// Options are how Check, CheckWithin and CheckAndPack differ; CheckWith
// takes them all.
type Options struct {
	// Limits, when set, holds the environment to them.
	Limits *model.Limits
	// CacheDir, when set, is where every charm is packed.
	CacheDir string
	// AllowOutside lists files and directories outside the environment's
	// directory whose files a service's resources may name (see
	// readResources); by default none.
	AllowOutside []string
	// Repository is the charm repository bare charm names are found in;
	// "" means $FIXPOINT_CHARM_REPO.
	Repository string
}

// CheckWith is Check as o says.
func CheckWith(o Options, paths ...string) (*Checked, error) {
	return check(paths, o)
}

// Check loads the environment in paths (as schemas.LoadEnvironment), the
// metadata of every charm it names (relative to the environment's
// directory) and resolves it with model.Resolve, without building or
// packing anything; this is `fixpoint vet`. It holds the environment to
// model.DefaultLimits too. Every problem found is in the returned
// *schemas.Error, each at its file:line:col.
func Check(paths ...string) (*Checked, error) {
	return CheckWithin(model.DefaultLimits, paths...)
}

// CheckWithin is Check holding the environment to limits: `vet` with
// --max-* flags, for a control plane whose limits were raised.
func CheckWithin(limits model.Limits, paths ...string) (*Checked, error) {
	return check(paths, Options{Limits: &limits})
}

// CheckAndPack is Check that also packs every charm into cacheDir, so the
// services carry real charm hashes: what plan, apply and up need. It
// leaves the limits to the control plane, whose limits are the ones in
// force.
func CheckAndPack(cacheDir string, paths ...string) (*Checked, error) {
	if cacheDir == "" {
		return nil, errors.New("CheckAndPack needs a cache directory for the archives")
	}
	return check(paths, Options{CacheDir: cacheDir})
}

// PlaceholderHash stands in for the content hash of an unpacked charm.
func PlaceholderHash(dir string) string { return "unpacked:" + dir }

func check(paths []string, o Options) (*Checked, error) {
	env, err := schemas.LoadEnvironment(paths...)
	// An environment that fails its schema is checked further as far as
	// the rest of it goes (schemas.Error.Partial): one run reports a
	// config typo next to a units typo.
	var schemaErr *schemas.Error
	switch {
	case errors.As(err, &schemaErr) && schemaErr.Partial != nil:
		env = schemaErr.Partial
	case err != nil:
		return nil, err
	}
	return checkLoaded(env, schemaErr, o, nil)
}

// checkLoaded checks a loaded environment; schemaErr holds the schema's
// problems, reported with the rest. Each service kept names, whose charm
// and resources are already known by hash and digest, is taken as it is:
// its charm from kept, nothing located, packed or read.
func checkLoaded(env *schemas.Env, schemaErr *schemas.Error, o Options, kept map[string]*model.Charm) (*Checked, error) {
	cacheDir, limits := o.CacheDir, o.Limits
	c := &Checked{
		Env:       env,
		Metas:     map[string]*model.CharmMeta{},
		Dirs:      map[string]string{},
		Charms:    map[string]*model.Charm{},
		Packed:    map[string]*Packed{},
		Resources: map[string]string{},
	}
	loc, cleanup, err := newLocator(env.Dir, o)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	problems := &schemas.Error{}
	within, err := newResourceRoots(env.Dir, o.AllowOutside)
	if err != nil {
		return nil, err
	}
	broken := map[string]bool{}   // services whose charm failed
	unfound := map[string]bool{}  // charm references already reported
	failed := map[string]bool{}   // charm dirs already reported
	hashes := map[string]string{} // charm dir → hash
	services := env.Env.Services
	for _, name := range slices.Sorted(maps.Keys(services)) {
		spec := services[name]
		at := []string{"services", name, "charm"}
		if ch, ok := kept[name]; ok {
			c.Charms[spec.CharmHash] = ch
			continue
		}
		if spec.Charm == "" || unfound[spec.Charm] {
			broken[name] = true
			continue
		}
		dir, err := loc.locate(spec.Charm)
		if err != nil {
			unfound[spec.Charm], broken[name] = true, true
			problems.Problems = append(problems.Problems, env.Problem(model.Problem{Path: at, Msg: err.Error()}))
			continue
		}
		if failed[dir] {
			broken[name] = true
			continue
		}
		c.Dirs[name] = dir
		hash, ok := hashes[dir]
		if !ok {
			meta, p, err := load(dir, cacheDir)
			if err != nil {
				failed[dir], broken[name] = true, true
				problems.Problems = append(problems.Problems, charmProblems(env, at, spec.Charm, dir, err)...)
				continue
			}
			hash = PlaceholderHash(dir)
			legacy := false
			if p != nil {
				hash, legacy = p.Hash, p.Legacy
				c.Packed[dir] = p
			}
			warnings, err := schemas.JujuFeatures(dir)
			if err != nil {
				failed[dir], broken[name] = true, true
				problems.Problems = append(problems.Problems, charmProblems(env, at, spec.Charm, dir, err)...)
				continue
			}
			c.Warnings = append(c.Warnings, warnings...)
			c.Metas[dir] = meta
			c.Charms[hash] = &model.Charm{Hash: hash, Source: spec.Charm, Meta: *meta, Legacy: legacy}
			if p != nil {
				c.Charms[hash].Size = p.Size
			}
			hashes[dir] = hash
		}
		spec.CharmHash = hash
		spec.Resources, spec.ResourceDigests = readResources(env, within, name, spec.Resources, c, problems)
		services[name] = spec
	}
	desired, err := model.Resolve(withoutBroken(env.Env, broken), c.Charms)
	var ps model.Problems
	switch {
	case errors.As(err, &ps):
		for _, p := range ps {
			problems.Problems = append(problems.Problems, env.Problem(p))
		}
	case err != nil:
		return nil, err
	case limits != nil && len(broken) == 0:
		for _, p := range limits.Check(desired) {
			problems.Problems = append(problems.Problems, env.Problem(p))
		}
	}
	if schemaErr != nil {
		schemaErr.Partial = nil
		schemaErr.Merge(problems.Problems)
		return nil, schemaErr
	}
	if len(problems.Problems) > 0 {
		problems.Sort()
		return nil, problems
	}
	c.Desired = desired
	return c, nil
}

// newLocator returns the locator of an environment in envDir, and what
// removes the temporary directory it may extract archives into.
func newLocator(envDir string, o Options) (*locator, func(), error) {
	l := &locator{envDir: envDir, repo: o.Repository, cacheDir: o.CacheDir, found: map[string]string{}}
	if l.repo == "" {
		l.repo = os.Getenv(RepositoryEnv)
	}
	if l.cacheDir != "" {
		return l, func() {}, nil
	}
	if d, err := DefaultCacheDir(); err == nil {
		l.cacheDir = d
		return l, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "fixpoint-charms-*")
	if err != nil {
		return nil, nil, fmt.Errorf("a directory to extract charm archives into: %w", err)
	}
	l.cacheDir = tmp
	return l, func() { os.RemoveAll(tmp) }, nil
}

// load reads (and with a cache directory, packs) one charm.
func load(dir, cacheDir string) (*model.CharmMeta, *Packed, error) {
	if cacheDir == "" {
		meta, err := schemas.LoadCharmMeta(dir)
		return meta, nil, err
	}
	p, err := Pack(dir, cacheDir)
	if err != nil {
		return nil, nil, err
	}
	return &p.Meta, p, nil
}

// charmProblems reports a charm that failed to load. Mistakes inside the
// charm's files are reported there, where they are fixed; anything else
// (a missing directory, a failed build) at the service's charm field.
func charmProblems(env *schemas.Env, at []string, written, dir string, err error) []schemas.Problem {
	var se *schemas.Error
	if errors.As(err, &se) {
		return se.Problems
	}
	return []schemas.Problem{env.Problem(model.Problem{Path: at, Msg: fmt.Sprintf("charm %q: %v", written, err)})}
}

// withoutBroken returns env without the services whose charm failed to
// load and the relations naming them: their problems are already
// reported, and resolving them would only add "no usable charm" noise.
func withoutBroken(env *model.Environment, broken map[string]bool) *model.Environment {
	if len(broken) == 0 {
		return env
	}
	out := *env
	out.Services = map[string]model.ServiceSpec{}
	for n, s := range env.Services {
		if !broken[n] {
			out.Services[n] = s
		}
	}
	out.Relations = map[string][]string{}
	for n, ends := range env.Relations {
		keep := true
		for _, e := range ends {
			svc, _, _ := strings.Cut(e, ":")
			keep = keep && !broken[svc]
		}
		if keep {
			out.Relations[n] = ends
		}
	}
	return &out
}

// missingDir explains a charm directory that is not there, suggesting a
// directory next to it with a similar name.
func missingDir(written, dir string) string {
	msg := fmt.Sprintf("charm directory %q does not exist (resolved to %s; charm paths are relative to the environment file's directory)", written, rel(dir))
	ents, err := os.ReadDir(filepath.Dir(dir))
	if err != nil {
		return msg
	}
	var dirs []string
	for _, e := range ents {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	if best := schemas.Closest(filepath.Base(dir), dirs); best != "" {
		msg += fmt.Sprintf("; did you mean %q?", filepath.ToSlash(filepath.Join(filepath.Dir(written), best)))
	}
	return msg
}

// rel shortens name relative to the working directory when that is below
// it or one level up, so messages stay short and free of absolute paths.
func rel(name string) string {
	wd, err := os.Getwd()
	if err != nil {
		return name
	}
	r, err := filepath.Rel(wd, name)
	if err != nil || strings.HasPrefix(r, ".."+string(filepath.Separator)+"..") {
		return name
	}
	return r
}
