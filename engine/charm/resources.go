package charm

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/fixpoint/fixpoint/engine/resfile"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/schemas"
)

// readResources reads the files a service's resources name (relative to
// the environment's directory) and returns the resources whose file was
// read and their sha256 digests by resource name; each file's absolute
// path goes into files by digest. A file that is missing, not a regular
// file or over model.MaxResourceSize is a problem at its line, and its
// resource is left out, so that it is reported once.
func readResources(env *schemas.Env, service string, res map[string]string, files map[string]string, problems *schemas.Error) (map[string]string, map[string]string) {
	if len(res) == 0 {
		return res, nil
	}
	kept, out := map[string]string{}, map[string]string{}
	for _, n := range slices.Sorted(maps.Keys(res)) {
		path := res[n]
		if !filepath.IsAbs(path) {
			path = filepath.Join(env.Dir, path)
		}
		path = filepath.Clean(path)
		digest, err := resfile.Digest(path, "the environment file")
		if err != nil {
			problems.Problems = append(problems.Problems, env.Problem(model.Problem{
				Path: []string{"services", service, "resources", n},
				Msg:  fmt.Sprintf("resource %s: %v", n, err),
			}))
			continue
		}
		kept[n], out[n] = res[n], digest
		files[digest] = path
	}
	return kept, out
}
