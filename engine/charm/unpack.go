package charm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Caps on what an archive may expand to, so that a small archive can fill
// neither an agent's disk nor its inodes. Charms built by charmcraft carry a
// Python virtualenv of a few thousand files; 20,000 entries leave room for
// that and refuse an archive of 100,000 empty directories.
const (
	// maxUnpacked caps the bytes of regular files.
	maxUnpacked = 4 * MaxSize
	// maxEntries caps the entries (files, directories, links) of an
	// archive.
	maxEntries = 20000
	// maxPathLen caps an entry's name; maxNameLen one element of it
	// (NAME_MAX on Linux).
	maxPathLen = 1024
	maxNameLen = 255
)

// Unpack checks that the archive at archivePath has the sha256 hash and
// is at most MaxSize bytes, then extracts it into dir. Only regular files
// and directories inside dir, and symlinks that stay inside it, are
// written: absolute names, names with .., links leading out, hard links
// and devices are refused, so an archive cannot write outside dir.
// An archive over the caps on bytes, entries or name lengths is refused,
// and a refused unpack removes every file and directory it created, so a
// retried bomb does not pile up on the disk.
func Unpack(archivePath, hash, dir string) error {
	// Extract from the bytes that were hashed, so the file cannot change
	// between check and use.
	data, err := readArchive(archivePath)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != hash {
		return fmt.Errorf("charm archive %s has sha256 %s, want %s: it is corrupt or not the charm asked for", archivePath, got, hash)
	}
	return extract(data, dir, defaultLimits)
}

// limits are the caps one extraction enforces.
type limits struct {
	bytes   int64
	entries int
}

// defaultLimits are the caps of every real unpack; tests lower them to
// exercise a refusal without writing hundreds of megabytes.
var defaultLimits = limits{bytes: maxUnpacked, entries: maxEntries}

// extract unpacks the tar data into dir and, when it fails, removes what
// it wrote.
func extract(data []byte, dir string, lim limits) error {
	return extractWith(tarEntries, data, dir, lim)
}

// extractWith unpacks data, decoded by dec, into dir and, when it fails,
// removes what it wrote.
func extractWith(dec decoder, data []byte, dir string, lim limits) error {
	w := writes{lim: lim, dec: dec}
	err := w.extract(data, dir)
	if err != nil {
		w.undo()
	}
	return err
}

// writes records the files and directories one extraction created, in
// order, so that a refused archive can be taken back.
type writes struct {
	lim limits
	dec decoder
	// root is the real path of the target directory once it exists: no
	// directory is made where a symlink on the way leads out of it.
	root    string
	created []string
}

// undo removes what was created, deepest last-made first; directories
// that hold something it did not create stay.
func (w *writes) undo() {
	for i := len(w.created) - 1; i >= 0; i-- {
		_ = os.Remove(w.created[i])
	}
	w.created = nil
}

// mkdirAll is os.MkdirAll that records each directory it makes.
func (w *writes) mkdirAll(dir string) error {
	if fi, err := os.Lstat(dir); err == nil {
		if fi.IsDir() {
			return nil
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			// inside checks where it leads.
			if st, err := os.Stat(dir); err == nil && st.IsDir() {
				return nil
			}
		}
		return fmt.Errorf("charm archive: %s exists and is not a directory", dir)
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := w.mkdirAll(parent); err != nil {
			return err
		}
	}
	if w.root != "" {
		real, err := filepath.EvalSymlinks(parent)
		if err != nil {
			return err
		}
		if !within(w.root, real) {
			return fmt.Errorf("charm archive: %s leads outside %s through a symlink", parent, w.root)
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil
		}
		return err
	}
	w.created = append(w.created, dir)
	return nil
}

// archiveEntry is one checked archive entry.
type archiveEntry struct {
	h    *tar.Header
	name string // cleaned, slash-separated, inside the target
	body io.Reader
}

// decoder reads an archive format and calls each for every entry in
// order: h describes it as a tar header would (a symlink's target in
// Linkname), body gives a regular file's bytes. Both formats (the packed
// tar.gz, a charmcraft zip) go through walk's one set of checks.
type decoder func(data []byte, each func(h *tar.Header, body io.Reader) error) error

// tarEntries decodes a tar, gzipped or not.
func tarEntries(data []byte, each func(*tar.Header, io.Reader) error) error {
	var r io.Reader = bytes.NewReader(data)
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return fmt.Errorf("charm archive: %w", err)
		}
		defer zr.Close()
		r = zr
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("charm archive: %w", err)
		}
		if err := each(h, tr); err != nil {
			return err
		}
	}
}

// walk decodes the archive and calls fn for each entry, after checking
// the entry count, its name (each once), its type and the running total of
// bytes against lim; fn may be nil to check only.
func walk(data []byte, dec decoder, lim limits, fn func(archiveEntry) error) error {
	var total int64
	entries := 0
	seen := map[string]bool{}
	return dec(data, func(h *tar.Header, body io.Reader) error {
		entries++
		if entries > lim.entries {
			return fmt.Errorf("charm archive has more than %d entries; a charm needs far fewer (remove build leftovers from the charm directory)", lim.entries)
		}
		name, err := safeName(h.Name)
		if err != nil {
			return err
		}
		if seen[name] {
			return fmt.Errorf("charm archive names %q more than once; an archive lists each file once", name)
		}
		seen[name] = true
		switch h.Typeflag {
		case tar.TypeDir:
		case tar.TypeReg:
			total += h.Size
			if h.Size < 0 || h.Size > lim.bytes || total > lim.bytes {
				return fmt.Errorf("charm archive expands to more than %d bytes", lim.bytes)
			}
		case tar.TypeSymlink:
			if len(h.Linkname) > maxPathLen || !linkTargetOK(h.Linkname) {
				return fmt.Errorf("charm archive entry %q is a symlink to %.64q, which leads outside the charm directory; only relative links inside it are allowed", name, h.Linkname)
			}
		default:
			return fmt.Errorf("charm archive entry %q is a %s; only files, directories and symlinks inside the charm are allowed", h.Name, typeName(h.Typeflag))
		}
		if fn == nil {
			return nil
		}
		return fn(archiveEntry{h: h, name: name, body: body})
	})
}

// extract checks the whole archive before it writes anything, so that a
// bomb is refused without touching the disk, then writes it.
func (w *writes) extract(data []byte, dir string) error {
	if err := walk(data, w.dec, w.lim, nil); err != nil {
		return err
	}
	if err := w.mkdirAll(dir); err != nil {
		return err
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	w.root = root
	return walk(data, w.dec, w.lim, func(e archiveEntry) error {
		target := filepath.Join(dir, filepath.FromSlash(e.name))
		if err := w.mkdirAll(filepath.Dir(target)); err != nil {
			return err
		}
		if err := inside(root, filepath.Dir(target)); err != nil {
			return err
		}
		switch e.h.Typeflag {
		case tar.TypeDir:
			return w.mkdirAll(target)
		case tar.TypeSymlink:
			if err := extractLink(root, dir, e.name, e.h.Linkname); err != nil {
				return err
			}
			w.created = append(w.created, target)
			return nil
		}
		return w.writeEntry(target, fileMode(e.h.Mode), e.body)
	})
}

// fileMode is the mode an unpacked file gets from its entry's mode: 0755
// when the entry has any execute bit, else 0644. Nothing else of the
// entry's mode survives: no setuid, setgid or sticky bit, no group or
// world write.
func fileMode(entry int64) os.FileMode {
	if entry&0o111 != 0 {
		return 0o755
	}
	return 0o644
}

// safeName cleans an entry name and refuses one that would land outside
// the target directory.
func safeName(name string) (string, error) {
	if len(name) > maxPathLen {
		return "", fmt.Errorf("charm archive entry %.64q... has a name of %d bytes, more than the %d allowed", name, len(name), maxPathLen)
	}
	clean := path.Clean(strings.TrimSuffix(name, "/"))
	if name == "" || path.IsAbs(name) || strings.Contains(name, "\\") || clean == ".." || strings.HasPrefix(clean, "../") || clean == "." {
		return "", fmt.Errorf("charm archive entry %q is outside the charm directory", name)
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return "", fmt.Errorf("charm archive entry %q is outside the charm directory", name)
		}
		if len(part) > maxNameLen {
			return "", fmt.Errorf("charm archive entry %q has an element of %d bytes, more than the %d allowed", name, len(part), maxNameLen)
		}
	}
	return clean, nil
}

// inside checks that dir, with symlinks resolved, is within root: a
// symlink already in the target directory must not carry files out of it.
func inside(root, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	if r, err := filepath.Rel(root, real); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return fmt.Errorf("charm archive: %s leads outside %s through a symlink", dir, root)
	}
	return nil
}

// writeEntry creates a file fresh; an existing symlink in its place is
// removed rather than followed.
func (w *writes) writeEntry(target string, mode os.FileMode, r io.Reader) error {
	if err := os.Remove(target); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	w.created = append(w.created, target)
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Chmod(target, mode) // the umask may have narrowed it
}

func typeName(t byte) string {
	switch t {
	case tar.TypeSymlink:
		return "symlink"
	case tar.TypeLink:
		return "hard link"
	case tar.TypeChar, tar.TypeBlock:
		return "device"
	case tar.TypeFifo:
		return "fifo"
	}
	return fmt.Sprintf("entry of type %q", t)
}
