package sim

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/resfile"
	"github.com/fixpoint/fixpoint/model"
)

// A service's resources reach its units as under `fixpoint up`: the
// environment's file is read and its digest taken when the environment is
// loaded (charm.Check, as vet and plan do), the deploy carries the digests
// (the universe's resources), the file is copied once per Simulate into
// the work directory's resources/<digest> (what an agent's fetch does),
// and every run links it into the unit's directory with
// engine.PlaceResources, whose paths resource-get prints. A resource the
// charm declares and the environment does not provide is not there, and
// resource-get fails with Juju's error.

// Resource gives the service's resource name the file at path, as an
// environment file's services.X.resources.NAME does (a relative path is
// relative to the working directory here). The file is read now: one
// that is missing, not a regular file or larger than a resource may be
// is reported by Simulate, as is a name the charm does not declare.
func (s *Service) Resource(name, path string) *Service {
	abs, err := filepath.Abs(path)
	if err == nil {
		var digest string
		if digest, err = resfile.Digest(abs, "the working directory"); err == nil {
			if s.resources == nil {
				s.resources, s.digests = map[string]string{}, map[string]string{}
			}
			s.resources[name], s.digests[name] = abs, digest
			return s
		}
	}
	s.env.errs = append(s.env.errs, fmt.Errorf("service %s: resource %s: %w", s.name, model.Quote(name, 24), err))
	return s
}

// fetchResources copies each resource file the services name into
// s.work/resources/<digest>, read-only, once for every schedule: the
// simulator's counterpart of an agent's fetch. A file that changed since
// its digest was taken is an error, as it is for the upload of apply.
func (s *sim) fetchResources(e *Env) error {
	for _, name := range e.Services() {
		svc := e.services[name]
		for _, n := range slices.Sorted(maps.Keys(svc.digests)) {
			digest := svc.digests[n]
			if _, ok := s.cached[digest]; ok {
				continue
			}
			dst := filepath.Join(s.work, "resources", digest)
			if err := copyResource(svc.resources[n], dst, digest); err != nil {
				return fmt.Errorf("service %s: resource %s: %w", name, n, err)
			}
			s.cached[digest] = dst
		}
	}
	return nil
}

// copyResource copies src to dst and makes it read-only: units share it
// through links. Its digest must be digest, and its size within
// model.MaxResourceSize (resfile.Digest's rules).
func copyResource(src, dst, digest string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	// Written aside and renamed: a work directory given in Options may
	// hold a read-only copy from an earlier Simulate.
	out, err := os.CreateTemp(filepath.Dir(dst), ".copy-*")
	if err != nil {
		return err
	}
	defer os.Remove(out.Name())
	// One byte past the cap is enough for resfile.Digest to refuse it.
	_, err = io.Copy(out, io.LimitReader(in, model.MaxResourceSize+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	got, err := resfile.Digest(out.Name(), "the work directory")
	if err != nil {
		return fmt.Errorf("copy of %s: %w", src, err)
	}
	if got != digest {
		return fmt.Errorf("%s changed since it was read: its digest is no longer %s; run the command again", src, model.ShortHash(digest))
	}
	if err := os.Chmod(out.Name(), 0o444); err != nil {
		return err
	}
	return os.Rename(out.Name(), dst)
}

// unitResources places the resources res of unit's universe (digests by
// name) in its directory dir, as an agent does, and returns their paths
// by name.
func (r *runner) unitResources(unit, dir string, res map[string]string) (map[string]string, error) {
	svc := r.fsm.st.Services[r.fsm.st.Units[unit].Service]
	var decl map[string]model.Resource
	if ch := r.fsm.st.Charms[svc.Charm]; ch != nil {
		decl = ch.Meta.Resources
	}
	return engine.PlaceResources(dir, svc.Charm, res, decl, func(digest string) (string, error) {
		path, ok := r.s.cached[digest]
		if !ok {
			return "", fmt.Errorf("resource %s is not among the environment's files", model.ShortHash(digest))
		}
		return path, nil
	})
}

// resourceSummary lists the resources st's services have, with their
// digests as status shows them ("web payload 3f2a1b2c3d4e, ..."), or "".
func resourceSummary(st *model.State) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(st.Services)) {
		res := st.Services[name].Resources
		for _, n := range slices.Sorted(maps.Keys(res)) {
			parts = append(parts, name+" "+n+" "+model.ShortHash(res[n]))
		}
	}
	return strings.Join(parts, ", ")
}
