package schemas

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/load"
)

// userFiles turns the paths a user named (one directory, or one or more
// .cue files) into absolute file names that all live in one directory,
// which is returned too: charm paths are relative to it.
func userFiles(paths []string) (dir string, files []string, err error) {
	if len(paths) == 0 {
		return "", nil, fmt.Errorf("no environment file given; name a .cue file or a directory of them")
	}
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", nil, err
		}
		fi, err := os.Stat(abs)
		if err != nil {
			return "", nil, fmt.Errorf("%s: %w", p, unwrapPathError(err))
		}
		var found []string
		if fi.IsDir() {
			if len(paths) > 1 {
				return "", nil, fmt.Errorf("%s is a directory; name either one directory or several .cue files, not both", p)
			}
			ents, err := os.ReadDir(abs)
			if err != nil {
				return "", nil, err
			}
			for _, e := range ents {
				// The same files `cue` would load from a directory:
				// .cue files not starting with _ or . .
				n := e.Name()
				if e.Type().IsRegular() && strings.HasSuffix(n, ".cue") && !strings.HasPrefix(n, "_") && !strings.HasPrefix(n, ".") {
					found = append(found, filepath.Join(abs, n))
				}
			}
			if len(found) == 0 {
				return "", nil, fmt.Errorf("%s: no .cue files in this directory", p)
			}
		} else {
			found = []string{abs}
		}
		for _, f := range found {
			d := filepath.Dir(f)
			if dir == "" {
				dir = d
			} else if d != dir {
				return "", nil, fmt.Errorf("%s is not in %s: the files of one environment must share a directory, since charm paths are relative to it", p, dir)
			}
		}
		files = append(files, found...)
	}
	sort.Strings(files)
	return dir, files, nil
}

func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// loadUser loads the user's files into ctx as one value. Package clauses
// are optional: files without one are the anonymous package, and files that
// all name the same package are that package. The shipped schemas are made
// importable as "fixpoint.dev/schemas" by overlaying them into the module's
// cue.mod/pkg, and a module file is overlaid too when the user has none,
// since CUE refuses imports outside a module.
func loadUser(ctx *cue.Context, dir string, files []string) (cue.Value, []*ast.File, error) {
	root := moduleRoot(dir)
	overlay := map[string]load.Source{}
	if root == "" {
		root = dir
		overlay[filepath.Join(root, "cue.mod", "module.cue")] = load.FromString("module: \"fixpoint.local/env\"\nlanguage: version: \"v0.17.0\"\n")
	}
	for _, name := range schemaFiles() {
		src, err := FS.ReadFile(name)
		if err != nil {
			return cue.Value{}, nil, err
		}
		overlay[filepath.Join(root, "cue.mod", "pkg", filepath.FromSlash(ImportPath), name)] = load.FromBytes(src)
	}
	pkg, err := packageName(files)
	if err != nil {
		return cue.Value{}, nil, err
	}
	cfg := &load.Config{
		Dir:        dir,
		ModuleRoot: root,
		Package:    pkg,
		Overlay:    overlay,
		// Imports resolve through the overlay or fail; never reach out
		// to a module registry while checking a file.
		Env: []string{"CUE_REGISTRY=none"},
	}
	insts := load.Instances(files, cfg)
	if len(insts) != 1 {
		return cue.Value{}, nil, fmt.Errorf("loading %s: got %d CUE instances, want 1", dir, len(insts))
	}
	if err := insts[0].Err; err != nil {
		return cue.Value{}, nil, err
	}
	// Errors inside the value (a conflict, a closed import's unknown
	// field) are left for validation, which reports them all with the
	// schema's explanations.
	return ctx.BuildInstance(insts[0]), insts[0].Files, nil
}

// moduleRoot returns the nearest directory at or above dir holding a
// cue.mod, or "" when there is none.
func moduleRoot(dir string) string {
	for d := dir; ; {
		if fi, err := os.Stat(filepath.Join(d, "cue.mod")); err == nil && fi.IsDir() {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}
