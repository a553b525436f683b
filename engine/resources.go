package engine

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/fixpoint/fixpoint/model"
)

// PlaceResources makes each resource of res (digests by name, as a
// universe lists them) present in unitDir as resources/<name>/<filename>,
// where Juju keeps a unit's resources and where resource-get points, and
// returns their paths by name. decl are the resources the unit's charm
// (of hash charm, for messages) declares; fetch returns a read-only local
// file of a digest, which the unit's copy links to. Resources the unit
// had that res no longer names are removed from unitDir. The agent and
// the simulator place resources through it, so a hook finds them in the
// same place under both.
func PlaceResources(unitDir, charm string, res map[string]string, decl map[string]model.Resource, fetch func(digest string) (string, error)) (map[string]string, error) {
	root := filepath.Join(unitDir, "resources")
	if len(res) == 0 {
		_ = os.RemoveAll(root)
		return nil, nil
	}
	paths := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(res)) {
		r, ok := decl[name]
		if !ok || model.CheckName(model.KindResource, name) != nil {
			// The control plane binds only declared names; a universe
			// that names another is not acted on.
			return nil, fmt.Errorf("resource %s is not declared by charm %s", model.Quote(name, 24), model.ShortHash(charm))
		}
		cached, err := fetch(res[name])
		if err != nil {
			return nil, err
		}
		dst := filepath.Join(root, name, r.File(name))
		if err := linkResource(cached, dst); err != nil {
			return nil, fmt.Errorf("resource %s: %w", name, err)
		}
		paths[name] = dst
	}
	// A resource the service no longer has is gone from the unit too.
	if ents, err := os.ReadDir(root); err == nil {
		for _, e := range ents {
			if _, ok := paths[e.Name()]; !ok {
				_ = os.RemoveAll(filepath.Join(root, e.Name()))
			}
		}
	}
	return paths, nil
}

// linkResource puts the cached file at dst, replacing what is there: a
// hard link, or a read-only copy where the two are on different file
// systems.
func linkResource(src, dst string) error {
	if fi, err := os.Stat(dst); err == nil {
		if si, err := os.Stat(src); err == nil && os.SameFile(fi, si) {
			return nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp := dst + ".new"
	_ = os.Remove(tmp)
	if err := os.Link(src, tmp); err != nil {
		data, rerr := os.ReadFile(src)
		if rerr != nil {
			return rerr
		}
		if err := os.WriteFile(tmp, data, 0o444); err != nil {
			return err
		}
	}
	return os.Rename(tmp, dst)
}
