package api

import (
	"net/http"
	"path/filepath"
	"slices"

	"github.com/fixpoint/fixpoint/model"
)

// Resource files are kept as charm archives are (blobs): PUT by the
// operator's CLI before the deploy that names them, GET by the agents of
// the machines whose units use them.

func (s *fileStore) resourceBlobs() blobs {
	return blobs{what: "resource", dir: filepath.Join(s.dir, "resources"), route: "/v1/resources/", max: model.MaxResourceSize}
}

func (s *fileStore) putResource(w http.ResponseWriter, r *http.Request) {
	s.putBlob(w, r, s.resourceBlobs())
}

// getResource answers an agent only with a resource of a service, of any
// environment, that has a unit on the agent's machine; the operator may
// fetch any. The
// agent's work comes from the leader, so a node behind it catches up
// once before it says no.
func (s *fileStore) getResource(w http.ResponseWriter, r *http.Request) {
	if p := principalOf(r); p.role == roleAgent {
		hash := r.PathValue("hash")
		uses := func() bool {
			ok := false
			_ = s.node.ViewCluster(func(c *model.Cluster) error {
				ok = c.UsesResource(p.machine, hash)
				return nil
			})
			return ok
		}
		ok := uses()
		if !ok && !s.node.IsLeader() && s.catchUp.wait(r.Context()) == nil {
			ok = uses()
		}
		if !ok {
			s.log.Warn("refused resource to agent", "machine", p.machine, "resource", hash, "remote", r.RemoteAddr)
			writeError(w, http.StatusForbidden, "%s may not fetch resource %s: no unit on machine %s uses it", p, model.Quote(hash, 72), p.machine)
			return
		}
	}
	s.getBlob(w, r, s.resourceBlobs())
}

// deployResources are the resource digests a deploy's services name,
// sorted, each once; malformed ones are left to the deploy's check.
func deployResources(d *model.Deploy) []string {
	var out []string
	for _, spec := range d.Env.Services {
		for _, dg := range spec.ResourceDigests {
			if validHash(dg) && !slices.Contains(out, dg) {
				out = append(out, dg)
			}
		}
	}
	slices.Sort(out)
	return out
}

// ensureResources makes every resource file d names present on this
// node, fetching from peers what it lacks; it answers the request and
// returns false when one is on no node.
func (s *fileStore) ensureResources(w http.ResponseWriter, r *http.Request, d *model.Deploy) bool {
	for _, h := range deployResources(d) {
		if err := s.ensure(r.Context(), s.resourceBlobs(), h); err != nil {
			writeError(w, http.StatusBadRequest, "resource %s is on no node: upload it with PUT /v1/resources/%s first (%v)", h, h, err)
			return false
		}
	}
	return true
}

// missingResources are the resource files of d this node lacks: the ones
// the CLI uploads before the deploy.
func (s *fileStore) missingResources(d *model.Deploy) []string {
	out := []string{}
	for _, h := range deployResources(d) {
		if !s.resourceBlobs().has(h) {
			out = append(out, h)
		}
	}
	return out
}
