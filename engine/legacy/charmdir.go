package legacy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// unitCharmSubdir is where a unit's own copy of its charm lives in its
// unit directory; manifestFile records which files of it the charm
// brought, as Juju's manifest deployer does (worker/uniter/charm).
const (
	unitCharmSubdir = "charm"
	manifestFile    = ".charm-manifest.json"
)

// skipRoot are files of an unpacked charm directory that belong to the
// agent, not to the charm: the marker it writes once unpacking is done.
var skipRoot = map[string]bool{".complete": true}

// manifest is what deployCharm last deployed into a unit's charm dir.
type manifest struct {
	// Source is the charm directory it was copied from and Charm the
	// universe's charm hash at the time: either moving means a new charm.
	Source string `json:"source"`
	Charm  string `json:"charm"`
	// Files are the charm's own paths, slash-separated, directories last.
	Files []string `json:"files"`
}

// deployCharm gives a unit its own charm directory, unitDir/charm, holding
// the charm in src. Juju gives every unit one (charms keep state there:
// ops keeps .unit-state.db in it), and on upgrade-charm it replaces the
// old charm's files with the new one's while every file the charm wrote
// itself stays. The same is done here: files the old charm brought and the
// new one lacks are removed, the new charm's files are written over, and
// anything else is left alone. The manifest is written last, so a deploy
// cut short is simply done again by the next call. An unchanged charm
// costs one small file read.
func deployCharm(src, charmHash, unitDir string) (string, error) {
	dst := filepath.Join(unitDir, unitCharmSubdir)
	manPath := filepath.Join(unitDir, manifestFile)
	var old manifest
	if b, err := os.ReadFile(manPath); err == nil {
		if json.Unmarshal(b, &old) != nil {
			old = manifest{}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("unit charm directory: %w", err)
	}
	if old.Source == src && old.Charm == charmHash && isDir(dst) {
		return dst, nil
	}
	files, err := charmFiles(src)
	if err != nil {
		return "", fmt.Errorf("unit charm directory: read %s: %w", src, err)
	}
	keep := map[string]bool{}
	for _, f := range files {
		keep[f] = true
	}
	// Files of the old charm first, deepest first so that a directory it
	// brought goes once it is empty (one the charm wrote into stays).
	for i := len(old.Files) - 1; i >= 0; i-- {
		f := old.Files[i]
		if keep[f] || !localName(f) {
			continue
		}
		p := filepath.Join(dst, filepath.FromSlash(f))
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			_ = os.Remove(p) // only if empty
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("unit charm directory: remove old %s: %w", f, err)
		}
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return "", fmt.Errorf("unit charm directory: %w", err)
	}
	for _, f := range files {
		if err := copyEntry(filepath.Join(src, filepath.FromSlash(f)), filepath.Join(dst, filepath.FromSlash(f))); err != nil {
			return "", fmt.Errorf("unit charm directory: %s: %w", f, err)
		}
	}
	b, err := json.Marshal(manifest{Source: src, Charm: charmHash, Files: files})
	if err != nil {
		return "", err
	}
	tmp := manPath + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return "", fmt.Errorf("unit charm directory: %w", err)
	}
	if err := os.Rename(tmp, manPath); err != nil {
		return "", fmt.Errorf("unit charm directory: %w", err)
	}
	return dst, nil
}

// charmFiles lists src's entries, slash-separated, parents before their
// contents; symlinks are listed as themselves, never followed.
func charmFiles(src string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil || rel == "." {
			return err
		}
		name := filepath.ToSlash(rel)
		if skipRoot[name] {
			return nil
		}
		out = append(out, name)
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool {
		return depth(out[i]) < depth(out[j]) || depth(out[i]) == depth(out[j]) && out[i] < out[j]
	})
	return out, err
}

func depth(name string) int { return strings.Count(name, "/") }

// localName refuses a manifest entry that would reach outside the charm
// directory: the manifest is a file on disk, not to be trusted blindly.
func localName(name string) bool {
	if name == "" || filepath.IsAbs(name) || strings.Contains(name, "\\") {
		return false
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." || part == "." || part == "" {
			return false
		}
	}
	return true
}

// copyEntry copies one file, symlink or directory from the unpacked charm
// to the unit's copy. Whatever is at dst is replaced, never written
// through: a symlink the charm left there must not redirect the write.
func copyEntry(src, dst string) error {
	fi, err := os.Lstat(src)
	if err != nil {
		return err
	}
	switch {
	case fi.IsDir():
		if cur, err := os.Lstat(dst); err == nil && !cur.IsDir() {
			if err := os.Remove(dst); err != nil {
				return err
			}
		}
		return os.MkdirAll(dst, 0o755)
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		if err := removeFile(dst); err != nil {
			return err
		}
		return os.Symlink(target, dst)
	case fi.Mode().IsRegular():
		if err := removeFile(dst); err != nil {
			return err
		}
		in, err := os.Open(src)
		if err != nil {
			return err
		}
		defer in.Close()
		mode := fi.Mode().Perm()
		out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		if err := out.Close(); err != nil {
			return err
		}
		return os.Chmod(dst, mode)
	}
	return fmt.Errorf("not a file, directory or symlink")
}

// removeFile removes dst unless it is missing; a directory in the way of
// a file is removed whole, as the new charm says a file goes there.
func removeFile(dst string) error {
	fi, err := os.Lstat(dst)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return os.RemoveAll(dst)
	}
	return os.Remove(dst)
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
