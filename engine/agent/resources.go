package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
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
// (engine.PlaceResources) and returns their paths by name.
func (a *Agent) unitResources(ctx context.Context, w wire.Work, charmDir, unitDir string) (map[string]string, error) {
	var res map[string]string
	var decl map[string]model.Resource
	if w.Universe != nil && len(w.Universe.Resources) > 0 {
		var err error
		if decl, err = a.declared(w.Charm, charmDir); err != nil {
			return nil, err
		}
		res = w.Universe.Resources
	}
	return engine.PlaceResources(unitDir, w.Charm, res, decl, func(digest string) (string, error) {
		return a.fetchResource(ctx, digest)
	})
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
