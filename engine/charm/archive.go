package charm

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// Charm archives. charmcraft builds a charm into NAME_BASE.charm, a zip of
// the charm directory as it runs: a dispatch script that starts
// src/charm.py, hooks/ (copies of, or links to, dispatch), a venv/ of the
// charm's Python dependencies. A service may name such an archive; it is
// extracted once into a directory named by the archive's sha256 and from
// there read, checked and packed like any charm directory.

// ArchiveSuffix ends the name of a charm archive as charmcraft builds it.
const ArchiveSuffix = ".charm"

// extractedDir is where, under a charm cache, archives are extracted.
const extractedDir = "extracted"

// ExtractArchive extracts the charm archive at archivePath (a charmcraft
// zip, or a tar.gz of fixpoint charm pack) into
// cacheDir/extracted/<sha256 of the archive>/ and returns that directory.
// An archive extracted before is not extracted again: the directory
// appears only whole (it is written aside and renamed), and its name is
// its archive's content. The archive is refused, and nothing is left
// behind, when it is over MaxSize, expands past the caps of Unpack, holds
// an entry outside the charm (absolute, with ..), a symlink leading out,
// or anything but files, directories and symlinks.
func ExtractArchive(archivePath, cacheDir string) (string, error) {
	data, err := readArchive(archivePath)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	dir := filepath.Join(cacheDir, extractedDir, hex.EncodeToString(sum[:]))
	if isDir(dir) {
		return dir, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", fmt.Errorf("charm cache: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".extract-*")
	if err != nil {
		return "", fmt.Errorf("charm cache: %w", err)
	}
	defer os.RemoveAll(tmp) // gone once renamed; what is left of a failure otherwise
	if err := extractWith(archiveDecoder(data), data, filepath.Join(tmp, "charm"), defaultLimits); err != nil {
		return "", fmt.Errorf("charm archive %s: %w", archivePath, err)
	}
	if err := os.Rename(filepath.Join(tmp, "charm"), dir); err != nil {
		// Another process extracting the same archive got there first:
		// its directory holds the same files.
		if isDir(dir) {
			return dir, nil
		}
		return "", fmt.Errorf("charm cache: %w", err)
	}
	return dir, nil
}

// archiveDecoder picks the decoder of an archive by its first bytes: a
// zip (charmcraft's .charm) starts "PK"; anything else is read as the
// tar.gz fixpoint charm pack writes (--output x.charm).
func archiveDecoder(data []byte) decoder {
	if bytes.HasPrefix(data, []byte("PK")) {
		return zipEntries
	}
	return tarEntries
}

// readArchive reads a charm archive (a packed tar.gz, a charmcraft zip)
// whole, refusing one over MaxSize before reading it: archives are small,
// zip's directory is at its end, and the bytes extracted are then the
// bytes hashed.
func readArchive(archivePath string) ([]byte, error) {
	f, err := os.Open(archivePath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("charm archive %s is not a regular file", archivePath)
	}
	if fi.Size() > MaxSize {
		return nil, fmt.Errorf("charm archive %s is %d bytes, larger than the %d allowed", archivePath, fi.Size(), MaxSize)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading charm archive %s: %w", archivePath, err)
	}
	if len(data) > MaxSize {
		return nil, fmt.Errorf("charm archive %s is larger than %d bytes", archivePath, MaxSize)
	}
	return data, nil
}

// zipEntries decodes a zip as walk's decoder: each entry becomes the tar
// header it stands for, its mode taken from the entry (Unix modes as
// charmcraft's Python zipfile writes them; an entry without one is a
// plain file or directory), a symlink's target read from its body.
func zipEntries(data []byte, each func(*tar.Header, io.Reader) error) error {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		// An insecure name is refused by walk, with the name.
		return fmt.Errorf("not a zip archive (charmcraft's .charm): %w", err)
	}
	for _, f := range zr.File {
		if err := zipEntry(f, each); err != nil {
			return err
		}
	}
	return nil
}

// zipEntry hands one zip entry to each, opening its body only for a file
// or a link.
func zipEntry(f *zip.File, each func(*tar.Header, io.Reader) error) error {
	mode := f.Mode()
	h := &tar.Header{Name: f.Name, Mode: int64(mode.Perm())}
	switch {
	case mode.IsDir():
		h.Typeflag = tar.TypeDir
		return each(h, nil)
	case mode&fs.ModeSymlink != 0:
		h.Typeflag = tar.TypeSymlink
		target, err := zipBody(f, maxPathLen)
		if err != nil {
			return err
		}
		h.Linkname = string(target)
		return each(h, nil)
	case mode.IsRegular():
		h.Typeflag = tar.TypeReg
		if f.UncompressedSize64 > math.MaxInt64 {
			return fmt.Errorf("charm archive entry %q declares %d bytes", f.Name, f.UncompressedSize64)
		}
		h.Size = int64(f.UncompressedSize64)
	case mode&fs.ModeNamedPipe != 0:
		h.Typeflag = tar.TypeFifo
		return each(h, nil)
	default: // device, socket, irregular
		h.Typeflag = tar.TypeChar
		return each(h, nil)
	}
	// walk checks the declared size before the body is read; the zip
	// reader then fails an entry whose data run past it or whose checksum
	// is wrong, so no more than declared reaches the disk.
	var body io.ReadCloser
	opened := false
	lazy := readerFunc(func(p []byte) (int, error) {
		if !opened {
			var err error
			if body, err = f.Open(); err != nil {
				return 0, fmt.Errorf("charm archive entry %q: %w", f.Name, err)
			}
			opened = true
		}
		return body.Read(p)
	})
	err := each(h, io.LimitReader(lazy, h.Size+1))
	if opened {
		body.Close()
	}
	return err
}

// zipBody reads a small entry (a symlink's target) whole, refusing one
// over max bytes.
func zipBody(f *zip.File, max int) ([]byte, error) {
	r, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("charm archive entry %q: %w", f.Name, err)
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err != nil {
		return nil, fmt.Errorf("charm archive entry %q: %w", f.Name, err)
	}
	if len(b) > max {
		return nil, fmt.Errorf("charm archive entry %q is a symlink with a target over %d bytes", f.Name, max)
	}
	return b, nil
}

// readerFunc is an io.Reader from a function.
type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// IsArchiveRef reports whether a charm reference names an archive file.
func IsArchiveRef(ref string) bool {
	return strings.HasSuffix(ref, ArchiveSuffix)
}
