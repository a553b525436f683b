package charm

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Symlinks in charms. charmcraft packs hooks/install, hooks/start and
// hooks/upgrade-charm as symlinks to ../dispatch, and charms built with it
// expect them to stay links (a copied file runs from hooks/ and looks for
// its code there). A link is kept as a link when its target is relative,
// stays inside the charm wherever links on the way point, and names
// something that is packed; any other link is followed, as before.

// linkTargetOK checks a link's target text: relative, and ".." only as
// leading components. A ".." after a name ("a/..") is resolved by the
// kernel through whatever a is, a link perhaps, so it could climb out of
// the charm however the text reads; leading ".." climb from the link's own
// directory, which is checked on the disk.
func linkTargetOK(target string) bool {
	if target == "" || path.IsAbs(target) || strings.Contains(target, "\\") {
		return false
	}
	leading := true
	for _, part := range strings.Split(target, "/") {
		switch {
		case part == "..":
			if !leading {
				return false
			}
		case part == "" || part == ".":
		default:
			leading = false
		}
	}
	return true
}

// within reports whether p (clean, absolute) is root or below it.
func within(root, p string) bool {
	r, err := filepath.Rel(root, p)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator))
}

// packedLink decides how the charm file at p (name relative to the charm
// root dir) that is a symlink is packed: its target when it is kept as a
// link, "" when it is followed. skip says whether a charm-relative name is
// left out of the archive (a link to it would dangle).
func packedLink(dir, p, name string, skip func(string) bool) (string, error) {
	target, err := os.Readlink(p)
	if err != nil {
		return "", fmt.Errorf("charm file %s: %w", name, err)
	}
	if !linkTargetOK(target) {
		return "", nil
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	parent, err := filepath.EvalSymlinks(filepath.Dir(p))
	if err != nil {
		return "", err
	}
	if !within(root, filepath.Join(parent, filepath.FromSlash(target))) {
		return "", nil
	}
	final, err := filepath.EvalSymlinks(p)
	if err != nil || !within(root, final) {
		return "", nil // dangling or leading out: follow (and fail) as before
	}
	rel, err := filepath.Rel(root, final)
	if err != nil || skip(filepath.ToSlash(rel)) {
		return "", nil
	}
	return target, nil
}

// extractLink creates the archive's symlink at target (a path in dir),
// refusing one that could lead outside root, the real path of dir.
// Nothing may already be at target: an archive names each entry once.
func extractLink(root, dir, name, linkname string) error {
	if !linkTargetOK(linkname) {
		return fmt.Errorf("charm archive entry %q is a symlink to %q, which leads outside the charm directory; only relative links inside it are allowed", name, linkname)
	}
	target := filepath.Join(dir, filepath.FromSlash(name))
	if err := inside(root, filepath.Dir(target)); err != nil {
		return err
	}
	parent, err := filepath.EvalSymlinks(filepath.Dir(target))
	if err != nil {
		return err
	}
	if !within(root, filepath.Join(parent, filepath.FromSlash(linkname))) {
		return fmt.Errorf("charm archive entry %q is a symlink to %q, which leads outside the charm directory; only relative links inside it are allowed", name, linkname)
	}
	if err := os.Symlink(linkname, target); err != nil {
		return fmt.Errorf("charm archive entry %q: %w", name, err)
	}
	return nil
}
