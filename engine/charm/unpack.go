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

// maxUnpacked caps the bytes an archive may expand to, so that a small
// archive cannot fill an agent's disk.
const maxUnpacked = 4 * MaxSize

// Unpack checks that the archive at archivePath has the sha256 hash and
// is at most MaxSize bytes, then extracts it into dir. Only regular files
// and directories inside dir, and symlinks that stay inside it, are
// written: absolute names, names with .., links leading out, hard links
// and devices are refused, so an archive cannot write outside dir.
func Unpack(archivePath, hash, dir string) error {
	f, err := os.Open(archivePath)
	if err != nil {
		return err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > MaxSize {
		return fmt.Errorf("charm archive %s is %d bytes, larger than the %d allowed", archivePath, fi.Size(), MaxSize)
	}
	// Read it whole (it is small) and extract from the bytes that were
	// hashed, so the file cannot change between check and use.
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return fmt.Errorf("reading charm archive %s: %w", archivePath, err)
	}
	if len(data) > MaxSize {
		return fmt.Errorf("charm archive %s is larger than %d bytes", archivePath, MaxSize)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != hash {
		return fmt.Errorf("charm archive %s has sha256 %s, want %s: it is corrupt or not the charm asked for", archivePath, got, hash)
	}
	return extract(data, dir)
}

func extract(data []byte, dir string) error {
	var r io.Reader = bytes.NewReader(data)
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return fmt.Errorf("charm archive: %w", err)
		}
		defer zr.Close()
		r = zr
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	tr := tar.NewReader(r)
	var total int64
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("charm archive: %w", err)
		}
		name, err := safeName(h.Name)
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			total += h.Size
			if total > maxUnpacked {
				return fmt.Errorf("charm archive expands to more than %d bytes", maxUnpacked)
			}
			mode := os.FileMode(0o644)
			if h.Mode&0o111 != 0 {
				mode = 0o755
			}
			if err := inside(root, filepath.Dir(target)); err != nil {
				return err
			}
			if err := writeEntry(target, mode, tr); err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := extractLink(root, dir, name, h.Linkname); err != nil {
				return err
			}
		default:
			return fmt.Errorf("charm archive entry %q is a %s; only files, directories and symlinks inside the charm are allowed", h.Name, typeName(h.Typeflag))
		}
	}
}

// safeName cleans an entry name and refuses one that would land outside
// the target directory.
func safeName(name string) (string, error) {
	clean := path.Clean(strings.TrimSuffix(name, "/"))
	if name == "" || path.IsAbs(name) || strings.Contains(name, "\\") || clean == ".." || strings.HasPrefix(clean, "../") || clean == "." {
		return "", fmt.Errorf("charm archive entry %q is outside the charm directory", name)
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return "", fmt.Errorf("charm archive entry %q is outside the charm directory", name)
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
func writeEntry(target string, mode os.FileMode, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	if err := os.Remove(target); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
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
