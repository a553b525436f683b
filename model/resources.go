package model

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// A charm's resources are files it declares (metadata.yaml's or
// charmcraft.yaml's resources, of type file) and the environment provides
// (services.X.resources.NAME: "path"). The CLI reads each file, uploads it
// content-addressed like a charm archive, and the deploy carries only its
// sha256 digest, which the state keeps per service. Agents fetch the file
// by digest; resource-get prints where it is on the unit's machine.

// KindResource names a charm resource.
const KindResource NameKind = "resource"

// ResourceFile is the only resource type fixpoint provides: Juju's
// oci-image resources belong to Kubernetes charms.
const ResourceFile = "file"

// MaxResources bounds the resources one charm declares, and so the
// digests one service carries in every universe and status answer.
const MaxResources = 32

// MaxResourceSize caps one resource file, as charm archives are capped:
// each travels to every control-plane node and every agent that runs a
// unit of its service.
const MaxResourceSize = 64 << 20

// maxFilename bounds a resource's declared file name, which becomes a
// path component on every machine that runs the charm.
const maxFilename = 128

// Resource is one resource a charm declares.
type Resource struct {
	Type string `json:"type"`
	// Filename is the name the file has where resource-get puts it;
	// the resource's name when the charm gives none.
	Filename    string `json:"filename,omitempty"`
	Description string `json:"description,omitempty"`
}

// File is the name resource-get's path ends in.
func (r Resource) File(name string) string {
	if r.Filename != "" {
		return r.Filename
	}
	return name
}

// checkResources is CharmMeta.Validate's part for resources.
func (m *CharmMeta) checkResources() error {
	if len(m.Resources) > MaxResources {
		return fmt.Errorf("charm %s declares %d resources; the limit is %d", m.Name, len(m.Resources), MaxResources)
	}
	for _, n := range slices.Sorted(maps.Keys(m.Resources)) {
		r := m.Resources[n]
		if err := CheckName(KindResource, n); err != nil {
			return fmt.Errorf("charm %s: %w", m.Name, err)
		}
		if r.Type != ResourceFile {
			return fmt.Errorf("charm %s: resource %q has type %s; fixpoint provides resources of type file only", m.Name, n, Quote(r.Type, 24))
		}
		if err := CheckFilename(r.Filename); r.Filename != "" && err != nil {
			return fmt.Errorf("charm %s: resource %q: %w", m.Name, n, err)
		}
	}
	return nil
}

// CheckFilename checks a resource's file name: one path component, at
// most maxFilename printable bytes, neither "." nor "..".
func CheckFilename(f string) error {
	if f == "" || f == "." || f == ".." || len(f) > maxFilename || strings.ContainsAny(f, "/\\") || strings.ContainsFunc(f, isControl) {
		return fmt.Errorf("filename %s is not a file name: one path component of at most %d printable bytes, without / or \\", Quote(f, 24), maxFilename)
	}
	return nil
}

// resolveResources binds a service's provided resources to the ones its
// charm declares: each provided name must be declared, and its digest a
// sha256 content hash. It returns the digests by name (nil for none).
func resolveResources(path []string, spec ServiceSpec, meta *CharmMeta, ps *Problems) map[string]string {
	if len(spec.Resources) == 0 && len(spec.ResourceDigests) == 0 {
		return nil
	}
	if len(spec.Resources) > MaxResources || len(spec.ResourceDigests) > MaxResources {
		ps.add(append(path, "resources"), "%d resources; a service takes at most %d", max(len(spec.Resources), len(spec.ResourceDigests)), MaxResources)
		return nil
	}
	out := map[string]string{}
	for _, n := range slices.Sorted(maps.Keys(spec.ResourceDigests)) {
		if _, ok := spec.Resources[n]; !ok {
			ps.add(append(path, "resources"), "a digest for resource %s, which names no file", Quote(n, 24))
		}
	}
	for _, n := range slices.Sorted(maps.Keys(spec.Resources)) {
		at := append(path, "resources", n)
		if err := CheckName(KindResource, n); err != nil {
			ps.add(at, "%v", err)
			continue
		}
		if _, ok := meta.Resources[n]; !ok {
			ps.add(at, "charm %s declares no resource %q (it declares: %s); remove it, or declare it under resources: in the charm's metadata", meta.Name, n, listOr(slices.Sorted(maps.Keys(meta.Resources))))
			continue
		}
		d := spec.ResourceDigests[n]
		if !isHexHash(d) {
			ps.add(at, "resource %s has no content digest: the CLI reads the file and sends its sha256 (got %s)", n, Quote(d, 24))
			continue
		}
		out[n] = d
	}
	return out
}

// ResourcesToken is one short digest of a service's resource digests,
// "" for none: Seen keeps it, and a unit whose token moved runs
// upgrade-charm, as Juju's uniter does when a resource changes.
func ResourcesToken(res map[string]string) string {
	if len(res) == 0 {
		return ""
	}
	h := sha256.New()
	for _, n := range slices.Sorted(maps.Keys(res)) {
		fmt.Fprintf(h, "%s=%s\n", n, res[n])
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// resourceChanges are the changes that take cur's resources to next's,
// by name.
func resourceChanges(service string, cur, next map[string]string) []Change {
	var out []Change
	names := map[string]bool{}
	for n := range cur {
		names[n] = true
	}
	for n := range next {
		names[n] = true
	}
	for _, n := range slices.Sorted(maps.Keys(names)) {
		if cur[n] != next[n] {
			out = append(out, Change{Kind: SetResource, Service: service, Key: n, Old: cur[n], New: next[n]})
		}
	}
	return out
}

// ResourceDigests lists the digests d's services use, each once, sorted:
// the files a deploy of d needs on the control plane.
func (d *Desired) ResourceDigests() []string {
	set := map[string]bool{}
	for _, s := range d.Services {
		for _, dg := range s.Resources {
			set[dg] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// UsesResource reports whether a service of st with a unit on machine
// has the resource of digest: what an agent's credential may fetch.
func (s *State) UsesResource(machine, digest string) bool {
	for _, u := range s.Units {
		if u.Machine != machine {
			continue
		}
		if svc := s.Services[u.Service]; svc != nil {
			for _, d := range svc.Resources {
				if d == digest {
					return true
				}
			}
		}
	}
	return false
}

// UsesResource reports whether a service of any environment of c with a
// unit on machine has the resource of digest: an agent runs the units of
// every environment placed on its machine, and resource files are kept
// once for the cluster, by digest.
func (c *Cluster) UsesResource(machine, digest string) bool {
	if c.Default.UsesResource(machine, digest) {
		return true
	}
	for _, name := range c.Names() {
		if c.Envs[name].State.UsesResource(machine, digest) {
			return true
		}
	}
	return false
}

// HasResource reports whether a service of st has the resource of
// digest: a file the control plane was given and keeps.
func (s *State) HasResource(digest string) bool {
	for _, svc := range s.Services {
		for _, d := range svc.Resources {
			if d == digest {
				return true
			}
		}
	}
	return false
}
