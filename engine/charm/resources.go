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

// OutsideResource is a service's resource whose file is outside the
// environment's directory, let in by Options.AllowOutside.
type OutsideResource struct {
	Service, Name string
	// Path is the file, its symlinks resolved.
	Path string
}

// resourceRoots say where a resource's file may be: inside the
// environment's directory, or inside one of the paths the operator
// allowed; each with its symlinks resolved, so that a symlink that leads
// out of the directory counts as outside.
type resourceRoots struct {
	dir   string
	allow []string
}

func newResourceRoots(envDir string, allow []string) (*resourceRoots, error) {
	dir, err := realPath(envDir)
	if err != nil {
		return nil, fmt.Errorf("the environment's directory: %w", err)
	}
	r := &resourceRoots{dir: dir}
	for _, a := range allow {
		p, err := realPath(a)
		if err != nil {
			return nil, fmt.Errorf("--allow-outside %s: %w", a, err)
		}
		r.allow = append(r.allow, p)
	}
	return r, nil
}

// realPath is p absolute, its symlinks resolved.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// resolved is path (absolute, clean) with the symlinks of its longest
// part that exists resolved: a missing file is judged by where its
// directory really is.
func resolved(path string) string {
	rest := ""
	for p := path; ; p = filepath.Dir(p) {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(real, rest)
		}
		if filepath.Dir(p) == p {
			return path
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

// judge resolves path (absolute and clean): the file to read, and why it
// may not be read ("" when it may). A path that does not resolve (no such
// file) is judged as written, and left to FileDigest to report.
func (r *resourceRoots) judge(path string) (string, string) {
	real := resolved(path)
	if within(r.dir, real) {
		return real, ""
	}
	for _, a := range r.allow {
		if within(a, real) {
			return real, ""
		}
	}
	what := path
	if real != path {
		what = fmt.Sprintf("%s (a symlink to %s)", path, real)
	}
	return real, fmt.Sprintf("%s is outside the environment's directory %s, and would be read on this machine and uploaded to the control plane; move the file into the directory, or allow it with --allow-outside %s on vet, plan and apply", what, r.dir, real)
}

// readResources reads the files a service's resources name (relative to
// the environment's directory) and returns the resources whose file was
// read and their sha256 digests by resource name; each file's path, its
// symlinks resolved, goes into c.Resources by digest. A file outside the
// environment's directory that the roots do not allow, missing, not a
// regular file or over model.MaxResourceSize is a problem at its line,
// and its resource is left out, so that it is reported once; an allowed
// one outside is listed in c.Outside.
func readResources(env *schemas.Env, roots *resourceRoots, service string, res map[string]string, c *Checked, problems *schemas.Error) (map[string]string, map[string]string) {
	if len(res) == 0 {
		return res, nil
	}
	kept, out := map[string]string{}, map[string]string{}
	for _, n := range slices.Sorted(maps.Keys(res)) {
		path := res[n]
		if !filepath.IsAbs(path) {
			path = filepath.Join(env.Dir, path)
		}
		path, err := filepath.Abs(path)
		if err != nil {
			problems.Problems = append(problems.Problems, env.Problem(model.Problem{
				Path: []string{"services", service, "resources", n},
				Msg:  fmt.Sprintf("resource %s: %v", n, err),
			}))
			continue
		}
		real, refused := roots.judge(path)
		if refused != "" {
			problems.Problems = append(problems.Problems, env.Problem(model.Problem{
				Path: []string{"services", service, "resources", n},
				Msg:  fmt.Sprintf("resource %s: %s", n, refused),
			}))
			continue
		}
		digest, err := resfile.Digest(real, "the environment file")
		if err != nil {
			problems.Problems = append(problems.Problems, env.Problem(model.Problem{
				Path: []string{"services", service, "resources", n},
				Msg:  fmt.Sprintf("resource %s: %v", n, err),
			}))
			continue
		}
		if !within(roots.dir, real) {
			c.Outside = append(c.Outside, OutsideResource{Service: service, Name: n, Path: real})
		}
		kept[n], out[n] = res[n], digest
		c.Resources[digest] = real
	}
	return kept, out
}
