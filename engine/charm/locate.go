package charm

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/schemas"
)

// Charm references. A service's charm is, in this order:
//   - a directory, relative to the environment file (or absolute);
//   - a charmcraft archive, a path ending in .charm (ExtractArchive);
//   - a bare NAME (no slash, no dot) found in the charm repository: the
//     directory $FIXPOINT_CHARM_REPO or --repository names, holding
//     NAME.charm or NAME/ (not both).
//
// A bare name that is also a directory beside the environment file is that
// directory: references written before repositories existed keep their
// meaning.

// RepositoryEnv names the environment variable that gives the charm
// repository when no --repository flag does.
const RepositoryEnv = "FIXPOINT_CHARM_REPO"

// shownCharms caps the repository's charms listed in an error.
const shownCharms = 8

// DefaultCacheDir is the user's charm cache: packed charms, Go builds and
// extracted archives, all content-addressed, so every command of every
// project may share it.
func DefaultCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "fixpoint", "charms"), nil
}

// LoadMeta reads the metadata of the charm ref names, resolved as a
// service's charm is: relative to baseDir, else a bare name in repository
// ("" means $FIXPOINT_CHARM_REPO), an archive extracted into
// DefaultCacheDir. It is how `fixpoint import` looks at a bundle's charms.
func LoadMeta(ref, baseDir, repository string) (*model.CharmMeta, error) {
	l, cleanup, err := newLocator(baseDir, Options{Repository: repository})
	if err != nil {
		return nil, err
	}
	defer cleanup()
	dir, err := l.locate(ref)
	if err != nil {
		return nil, err
	}
	return schemas.LoadCharmMeta(dir)
}

// locator resolves the charm references of one environment.
type locator struct {
	envDir string
	// repo is the charm repository, "" when none is set.
	repo string
	// cacheDir is where archives are extracted.
	cacheDir string
	// found memoises references already resolved, by absolute path or
	// repository name, so an archive named twice is read once.
	found map[string]string
}

// locate returns the charm directory ref names, or an error that says
// what is missing, where it was looked for and how to fix it.
func (l *locator) locate(ref string) (string, error) {
	p := ref
	if !filepath.IsAbs(p) {
		p = filepath.Join(l.envDir, p)
	}
	p = filepath.Clean(p)
	if dir, ok := l.found[p]; ok {
		return dir, nil
	}
	var dir string
	var err error
	switch {
	case IsArchiveRef(ref):
		dir, err = l.extract(ref, p)
	case isDir(p):
		dir = p
	case bareName(ref):
		dir, err = l.fromRepository(ref)
	default:
		err = fmt.Errorf("%s", missingDir(ref, p))
	}
	if err == nil {
		l.found[p] = dir
	}
	return dir, err
}

// bareName reports whether ref is a charm name rather than a path.
func bareName(ref string) bool {
	return ref != "" && !strings.ContainsAny(ref, `/\.`)
}

// extract extracts the archive at p (written as ref).
func (l *locator) extract(ref, p string) (string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		msg := fmt.Sprintf("charm archive %q does not exist (resolved to %s; charm paths are relative to the environment file's directory)", ref, rel(p))
		if best := schemas.Closest(filepath.Base(p), nearNames(filepath.Dir(p), true)); best != "" {
			msg += fmt.Sprintf("; did you mean %q?", filepath.ToSlash(filepath.Join(filepath.Dir(ref), best)))
		}
		return "", fmt.Errorf("%s", msg)
	}
	if fi.IsDir() {
		return p, nil // a directory that happens to end in .charm
	}
	return ExtractArchive(p, l.cacheDir)
}

// fromRepository finds the charm name in the repository.
func (l *locator) fromRepository(name string) (string, error) {
	if l.repo == "" {
		msg := fmt.Sprintf("charm %q is not a directory beside the environment file and no charm repository is set: set $%s or pass --repository DIR holding %s%s or %s/", name, RepositoryEnv, name, ArchiveSuffix, name)
		if best := schemas.Closest(name, nearNames(l.envDir, false)); best != "" {
			msg += fmt.Sprintf("; or did you mean the directory %q?", "./"+best)
		}
		return "", fmt.Errorf("%s", msg)
	}
	if !isDir(l.repo) {
		return "", fmt.Errorf("charm %q: the charm repository %s (--repository or $%s) is not a directory", name, rel(l.repo), RepositoryEnv)
	}
	archive := filepath.Join(l.repo, name+ArchiveSuffix)
	dir := filepath.Join(l.repo, name)
	_, aerr := os.Stat(archive)
	switch hasArchive, hasDir := aerr == nil, isDir(dir); {
	case hasArchive && hasDir:
		return "", fmt.Errorf("charm %q is both %s and %s/ in the charm repository %s; remove one, or name the one you mean by its path", name, name+ArchiveSuffix, name, rel(l.repo))
	case hasArchive:
		return l.extract(archive, archive)
	case hasDir:
		return dir, nil
	}
	msg := fmt.Sprintf("charm %q is not a directory beside the environment file, and the charm repository %s holds neither %s%s nor %s/", name, rel(l.repo), name, ArchiveSuffix, name)
	names := repositoryCharms(l.repo)
	switch best := schemas.Closest(name, names); {
	case best != "":
		msg += fmt.Sprintf("; did you mean %q?", best)
	case len(names) == 0:
		msg += "; it holds no charms"
	case len(names) <= shownCharms:
		msg += "; it holds " + strings.Join(names, ", ")
	default:
		msg += fmt.Sprintf("; it holds %s and %d more", strings.Join(names[:shownCharms], ", "), len(names)-shownCharms)
	}
	return "", fmt.Errorf("%s", msg)
}

// repositoryCharms lists the charm names a repository holds, sorted.
func repositoryCharms(repo string) []string {
	var names []string
	for _, n := range nearNames(repo, true) {
		n = strings.TrimSuffix(n, ArchiveSuffix)
		if bareName(n) && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// nearNames lists dir's subdirectories and, with archives, its .charm
// files: the names a mistyped reference may have meant.
func nearNames(dir string, archives bool) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() || archives && strings.HasSuffix(e.Name(), ArchiveSuffix) {
			names = append(names, e.Name())
		}
	}
	return names
}
