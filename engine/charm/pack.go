package charm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/schemas"
)

// MaxSize caps a packed charm archive. Archives travel to every agent
// that runs the charm and are kept by the control plane, so a charm that
// grows past this is refused rather than slowing everything down.
const MaxSize = 64 << 20

// Charm directory layout.
const (
	// SrcDir holds a Go main package built into ReconcileHook, when it
	// holds Go; otherwise (an ops charm's src/charm.py) it is shipped as
	// charm files.
	SrcDir = "src"
	// HooksDir holds the hooks; every file in it is executable.
	HooksDir = "hooks"
	// ReconcileHook is the native hook, relative to the charm root.
	ReconcileHook = "hooks/reconcile"
)

// Packed is a charm packed into an archive.
type Packed struct {
	// Hash is the hex sha256 of the archive bytes.
	Hash string
	// Path is the archive, cacheDir/<Hash>.tar.gz.
	Path string
	// Size is the archive's size in bytes.
	Size int64
	// Meta is the charm's metadata.
	Meta model.CharmMeta
	// Legacy is true for an old-hook charm: it has neither
	// hooks/reconcile nor Go in src/ (hooks/<event> or dispatch run).
	Legacy bool
}

// Charm returns the packed charm as the control plane records it; source
// says where it came from, e.g. the path written in the environment.
func (p *Packed) Charm(source string) *model.Charm {
	return &model.Charm{Hash: p.Hash, Source: source, Size: p.Size, Meta: p.Meta, Legacy: p.Legacy}
}

// Pack reads the charm in dir, builds its Go reconcile hook from src/ if
// that holds Go, and writes a deterministic archive of what an agent needs
// to run its hooks to cacheDir/<sha256>.tar.gz. A Go src/ and dot files are
// left out; symlinks that stay inside the charm are kept as symlinks. Go
// builds are cached in cacheDir, so packing unchanged sources again does
// not rebuild, and unchanged contents are not compressed again (packedFor).
func Pack(dir, cacheDir string) (*Packed, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	meta, err := schemas.LoadCharmMeta(dir)
	if err != nil {
		return nil, err
	}
	hasSrc, err := holdsGo(filepath.Join(dir, SrcDir))
	if err != nil {
		return nil, err
	}
	files, err := collect(dir, hasSrc)
	if err != nil {
		return nil, err
	}
	_, hasReconcile := files[ReconcileHook]
	if hasSrc {
		if hasReconcile {
			return nil, fmt.Errorf("charm %s has both %s/ and %s; %s/ is built into %s, so remove one of them", dir, SrcDir, ReconcileHook, SrcDir, ReconcileHook)
		}
		bin, err := buildHook(filepath.Join(dir, SrcDir), cacheDir)
		if err != nil {
			return nil, err
		}
		files[ReconcileHook] = source{path: bin, exec: true}
	}
	var tarball bytes.Buffer
	if err := writeTar(&tarball, files); err != nil {
		return nil, fmt.Errorf("packing %s: %w", dir, err)
	}
	p := &Packed{Meta: *meta, Legacy: !hasReconcile && !hasSrc}
	contents := sha256.Sum256(tarball.Bytes())
	if p.Hash, p.Size = packedFor(cacheDir, contents); p.Hash != "" {
		p.Path = filepath.Join(cacheDir, p.Hash+".tar.gz")
		return p, nil
	}
	var buf bytes.Buffer
	if err := compress(&buf, tarball.Bytes()); err != nil {
		return nil, fmt.Errorf("packing %s: %w", dir, err)
	}
	if buf.Len() > MaxSize {
		return nil, fmt.Errorf("charm %s packs to %d bytes, more than the %d allowed; remove large files from it", dir, buf.Len(), MaxSize)
	}
	sum := sha256.Sum256(buf.Bytes())
	p.Hash, p.Size = hex.EncodeToString(sum[:]), int64(buf.Len())
	p.Path = filepath.Join(cacheDir, p.Hash+".tar.gz")
	if err := writeOnce(p.Path, buf.Bytes()); err != nil {
		return nil, err
	}
	// What these contents packed to, for the next Pack: a lost or
	// partial note only costs a compression.
	if err := writeOnce(packedNote(cacheDir, contents), []byte(p.Hash)); err != nil {
		return nil, err
	}
	return p, nil
}

// packedFor returns the hash and size of the archive that a charm of
// these contents (the sha256 of its uncompressed tar) was packed to
// before, if the cache still holds that archive whole; "" otherwise. The
// best compression, which keeps the hashes charms always had, took 60 %
// of `fixpoint apply`'s CPU (0.3 s for a Go charm's hook) on every apply
// of an unchanged charm.
func packedFor(cacheDir string, contents [sha256.Size]byte) (string, int64) {
	note, err := os.ReadFile(packedNote(cacheDir, contents))
	if err != nil || len(note) != 2*sha256.Size {
		return "", 0
	}
	hash := string(note)
	data, err := os.ReadFile(filepath.Join(cacheDir, hash+".tar.gz"))
	if err != nil || len(data) > MaxSize {
		return "", 0
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != hash {
		// Damaged, or not what the note says: pack afresh.
		return "", 0
	}
	return hash, int64(len(data))
}

// compressions counts archives compressed, so tests can tell a reuse.
var compressions atomic.Int64

// packedNote is where Pack notes the archive that contents packed to.
func packedNote(cacheDir string, contents [sha256.Size]byte) string {
	return filepath.Join(cacheDir, "packed", hex.EncodeToString(contents[:]))
}

// source is a file to archive: where its bytes are, and whether it runs;
// or, with link set, a symlink to keep and its target.
type source struct {
	path string
	exec bool
	link string
}

// holdsGo reports whether src is a directory with Go files in it: only
// then is it a Go main package to build (an ops charm keeps charm.py in
// src/).
func holdsGo(src string) (bool, error) {
	ents, err := os.ReadDir(src)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		if fi, serr := os.Stat(src); serr == nil && !fi.IsDir() {
			return false, nil
		}
		return false, fmt.Errorf("charm %s: %w", SrcDir, err)
	}
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".go") {
			return true, nil
		}
	}
	return false, nil
}

// collect lists the charm's files by slash-separated archive name,
// leaving out dot files such as .git and, when goSrc, src/ (built, not
// shipped). A symlink that stays inside the charm is kept (packedLink);
// any other is followed to a regular file, and a symlinked directory
// leading out is an error, since following it could pull in anything.
func collect(dir string, goSrc bool) (map[string]source, error) {
	skip := func(name string) bool {
		first, _, _ := strings.Cut(name, "/")
		return strings.HasPrefix(first, ".") || goSrc && first == SrcDir
	}
	files := map[string]source{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		name := filepath.ToSlash(rel)
		if strings.HasPrefix(d.Name(), ".") || goSrc && name == SrcDir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := packedLink(dir, p, name, skip)
			if err != nil {
				return err
			}
			if target != "" {
				files[name] = source{path: p, link: target}
				return nil
			}
		}
		fi, err := os.Stat(p) // follows symlinks
		if err != nil {
			return fmt.Errorf("charm file %s: %w", name, err)
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("charm file %s is not a regular file (a symlink to a directory, a device, ...); charms may hold only files and directories", name)
		}
		exec := fi.Mode()&0o111 != 0 || path.Dir(name) == HooksDir
		files[name] = source{path: p, exec: exec}
		return nil
	})
	return files, err
}

// writeTar writes files as a tar with every detail that could
// vary between machines or runs fixed: entries sorted, parent directories
// listed once, times zero, owner 0, modes 0755 or 0644.
func writeTar(w *bytes.Buffer, files map[string]source) error {
	names := make([]string, 0, len(files))
	dirs := map[string]bool{}
	for name := range files {
		names = append(names, name)
		for d := path.Dir(name); d != "."; d = path.Dir(d) {
			dirs[d+"/"] = true
		}
	}
	for d := range dirs {
		names = append(names, d)
	}
	sort.Strings(names)

	tw := tar.NewWriter(w)
	epoch := time.Unix(0, 0).UTC()
	for _, name := range names {
		h := &tar.Header{Name: name, ModTime: epoch, Format: tar.FormatPAX}
		if strings.HasSuffix(name, "/") {
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
			continue
		}
		src := files[name]
		if src.link != "" {
			h.Typeflag, h.Mode, h.Linkname = tar.TypeSymlink, 0o777, src.link
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
			continue
		}
		data, err := os.ReadFile(src.path)
		if err != nil {
			return err
		}
		h.Typeflag, h.Mode, h.Size = tar.TypeReg, 0o644, int64(len(data))
		if src.exec {
			h.Mode = 0o755
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	return tw.Close()
}

// compress writes tarball gzipped to w. gzip.NewWriterLevel at a fixed
// level and a zero header (no name, no time) gives the same bytes for the
// same input.
func compress(w *bytes.Buffer, tarball []byte) error {
	compressions.Add(1)
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write(tarball); err != nil {
		return err
	}
	return zw.Close()
}

// writeOnce writes data to name unless it is already there. Names are
// content hashes, so an existing file already holds these bytes; writing
// through a temporary file keeps a reader from seeing half an archive.
func writeOnce(name string, data []byte) error {
	if fi, err := os.Stat(name); err == nil && fi.Size() == int64(len(data)) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return fmt.Errorf("charm cache: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), ".pack-*")
	if err != nil {
		return fmt.Errorf("charm cache: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("charm cache: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("charm cache: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}

var errNoGo = errors.New("the go command is not installed (it is needed to build a charm's src/)")

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
