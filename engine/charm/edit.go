package charm

import (
	"fmt"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/schemas"
)

// CheckEdited checks env, an environment document as the control plane
// holds it, edited by a command (`fixpoint deploy` and the other edits):
// the services fresh names have their charm located relative to dir (a
// directory, a .charm archive or a repository name), packed into
// o.CacheDir, vetted, and their resources read, as apply does for a file
// in dir; every other service keeps the charm hash and resource digests
// the document gives it, its charm found in known by hash. The whole is
// then resolved as apply resolves it.
func CheckEdited(o Options, dir string, env *model.Environment, known map[string]*model.Charm, fresh ...string) (*Checked, error) {
	if o.CacheDir == "" {
		return nil, fmt.Errorf("CheckEdited needs a cache directory for the archives")
	}
	isFresh := map[string]bool{}
	for _, n := range fresh {
		isFresh[n] = true
	}
	kept := map[string]*model.Charm{}
	for name, spec := range env.Services {
		if isFresh[name] {
			continue
		}
		ch := known[spec.CharmHash]
		if ch == nil {
			return nil, fmt.Errorf("service %s: the environment names charm %s (%s), which the control plane did not send; read the environment again", name, model.ShortHash(spec.CharmHash), spec.Charm)
		}
		kept[name] = ch
	}
	return checkLoaded(&schemas.Env{Env: env, Dir: dir}, nil, o, kept)
}
