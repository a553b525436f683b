package agent

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/wire"
	"github.com/fixpoint/fixpoint/schemas"
)

// A unit's resources are fetched by digest into the data dir's cache
// (resources/<digest>), once per machine, and linked into the unit's own
// directory as resources/<name>/<filename>, where Juju keeps them
// (/var/lib/juju/agents/unit-X-N/resources/NAME/FILE) and where
// resource-get points. The cache file is never written in place: a new
// content is a new digest.

// resourceCache serialises fetches per digest and remembers each charm's
// declared resources.
type resourceCache struct {
	mu     sync.Mutex
	fetch  map[string]*sync.Mutex
	charms map[string]map[string]model.Resource // charm hash → declared
}

// declared returns the resources the charm in dir (of hash) declares.
func (a *Agent) declared(hash, dir string) (map[string]model.Resource, error) {
	c := &a.res
	c.mu.Lock()
	d, ok := c.charms[hash]
	c.mu.Unlock()
	if ok {
		return d, nil
	}
	meta, err := schemas.LoadCharmMeta(dir)
	if err != nil {
		return nil, fmt.Errorf("read charm %s's resources: %w", model.ShortHash(hash), err)
	}
	c.mu.Lock()
	if c.charms == nil {
		c.charms = map[string]map[string]model.Resource{}
	}
	c.charms[hash] = meta.Resources
	c.mu.Unlock()
	return meta.Resources, nil
}

// unitResources makes each resource of w's universe present in unitDir
// and returns their paths by name. Resources of the unit's earlier
// universes that the service no longer has are removed from unitDir.
func (a *Agent) unitResources(ctx context.Context, w wire.Work, charmDir, unitDir string) (map[string]string, error) {
	root := filepath.Join(unitDir, "resources")
	if w.Universe == nil || len(w.Universe.Resources) == 0 {
		_ = os.RemoveAll(root)
		return nil, nil
	}
	decl, err := a.declared(w.Charm, charmDir)
	if err != nil {
		return nil, err
	}
	paths := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(w.Universe.Resources)) {
		digest := w.Universe.Resources[name]
		r, ok := decl[name]
		if !ok || model.CheckName(model.KindResource, name) != nil {
			// The control plane binds only declared names; a universe
			// that names another is not acted on.
			return nil, fmt.Errorf("resource %s is not declared by charm %s", model.Quote(name, 24), model.ShortHash(w.Charm))
		}
		cached, err := a.fetchResource(ctx, digest)
		if err != nil {
			return nil, err
		}
		dst := filepath.Join(root, name, r.File(name))
		if err := link(cached, dst); err != nil {
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

// fetchResource returns the cached file of digest, fetching it once.
func (a *Agent) fetchResource(ctx context.Context, digest string) (string, error) {
	c := &a.res
	c.mu.Lock()
	if c.fetch == nil {
		c.fetch = map[string]*sync.Mutex{}
	}
	m, ok := c.fetch[digest]
	if !ok {
		m = &sync.Mutex{}
		c.fetch[digest] = m
	}
	c.mu.Unlock()
	m.Lock()
	defer m.Unlock()
	path := filepath.Join(a.cfg.DataDir, "resources", digest)
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := a.client.FetchResource(ctx, digest, path); err != nil {
		return "", fmt.Errorf("fetch resource %s: %w", model.ShortHash(digest), err)
	}
	// Units share the file through links: none may change it for the
	// others.
	if err := os.Chmod(path, 0o444); err != nil {
		return "", fmt.Errorf("fetch resource %s: %w", model.ShortHash(digest), err)
	}
	return path, nil
}

// link puts the cached file at dst, replacing what is there: a hard
// link, or a read-only copy where the two are on different file systems.
func link(src, dst string) error {
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
