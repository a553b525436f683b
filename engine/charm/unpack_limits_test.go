package charm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gzTar builds a gzipped tar from headers; regular files get size zero
// bytes of content unless body is set.
func gzTar(t testing.TB, write func(tw *tar.Writer)) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	write(tw)
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// saveArchive writes data to a file and returns its path and hash.
func saveArchive(t *testing.T, data []byte) (string, string) {
	t.Helper()
	name := filepath.Join(t.TempDir(), "a.tar.gz")
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return name, hex.EncodeToString(sum[:])
}

// entriesUnder counts what is below dir, dir itself excluded.
func entriesUnder(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// An archive of 100,000 empty directories took 100,005 inodes on an agent:
// the entry cap refuses it, and the directories made before the refusal are
// removed again.
func TestUnpackCapsEntries(t *testing.T) {
	data := gzTar(t, func(tw *tar.Writer) {
		for i := range 100000 {
			if err := tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("d%06d/", i), Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
				t.Fatal(err)
			}
		}
	})
	archive, hash := saveArchive(t, data)
	parent := t.TempDir()
	err := Unpack(archive, hash, filepath.Join(parent, "charm"))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d entries", maxEntries)) {
		t.Fatalf("err = %v, want the entry cap named", err)
	}
	if n := entriesUnder(t, parent); n != 0 {
		t.Errorf("%d entries left behind after the refusal", n)
	}
}

func TestUnpackCapsNameLengths(t *testing.T) {
	long := strings.Repeat("a/", maxPathLen/2) + "f"
	elem := "hooks/" + strings.Repeat("x", maxNameLen+1)
	for _, c := range []struct{ name, want string }{
		{long, "more than the 1024 allowed"},
		{elem, "an element of 256 bytes"},
	} {
		archive, hash := craft(t, &tar.Header{Name: "ok", Typeflag: tar.TypeReg, Mode: 0o644}, &tar.Header{Name: c.name, Typeflag: tar.TypeReg, Mode: 0o644})
		parent := t.TempDir()
		err := Unpack(archive, hash, filepath.Join(parent, "charm"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("name of %d bytes: err = %v, want %q", len(c.name), err, c.want)
		}
		if n := entriesUnder(t, parent); n != 0 {
			t.Errorf("name of %d bytes: %d entries left behind", len(c.name), n)
		}
	}
}

// A refused archive bomb left 200 MB behind and wrote it again on every
// retry: now the whole archive is checked before anything is written. The
// cap is lowered here to keep the test light; the path is the one every
// unpack takes.
func TestRefusedUnpackRemovesWhatItWrote(t *testing.T) {
	zeros := make([]byte, 400<<10)
	data := gzTar(t, func(tw *tar.Writer) {
		for i := range 5 {
			tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("deep/er/f%d", i), Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(zeros))})
			tw.Write(zeros)
		}
	})
	lim := limits{bytes: 1 << 20, entries: maxEntries}

	// Into a fresh directory: nothing is left, not even the directory.
	parent := t.TempDir()
	err := extract(data, filepath.Join(parent, "charm"), lim)
	if err == nil || !strings.Contains(err.Error(), "expands to more than 1048576 bytes") {
		t.Fatalf("err = %v, want the byte cap named", err)
	}
	if n := entriesUnder(t, parent); n != 0 {
		t.Errorf("%d entries left behind after the refusal", n)
	}

	// Into a directory that already holds files: those stay, the
	// archive's go.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "keep"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := extract(data, dir, lim); err == nil {
		t.Fatal("the bomb was accepted")
	}
	if got, err := os.ReadFile(filepath.Join(dir, "keep")); err != nil || string(got) != "mine" {
		t.Errorf("keep = %q, %v: a file the archive did not write was touched", got, err)
	}
	if n := entriesUnder(t, dir); n != 1 {
		t.Errorf("%d entries in the directory after the refusal, want only keep", n)
	}

	// Under the cap the same archive unpacks.
	if err := extract(data, filepath.Join(t.TempDir(), "charm"), limits{bytes: 4 << 20, entries: maxEntries}); err != nil {
		t.Errorf("under the cap: %v", err)
	}
}

// An archive that passes the checks but fails while it is written (here a
// file where a later entry needs a directory) is taken back too.
func TestFailedUnpackRemovesWhatItWrote(t *testing.T) {
	data := gzTar(t, func(tw *tar.Writer) {
		for _, name := range []string{"x/f1", "y", "y/z"} {
			tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: 1})
			tw.Write([]byte("1"))
		}
	})
	parent := t.TempDir()
	err := extract(data, filepath.Join(parent, "charm"), defaultLimits)
	if err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("err = %v, want y named as not a directory", err)
	}
	if n := entriesUnder(t, parent); n != 0 {
		t.Errorf("%d entries left behind after the failure", n)
	}
}

// FuzzExtract feeds arbitrary bytes to the archive decoder: whatever it
// gets, nothing lands outside the target, no link leads out of it, and a
// refused archive leaves nothing behind.
func FuzzExtract(f *testing.F) {
	if p, err := Pack("testdata/oldcharm", f.TempDir()); err == nil {
		if data, err := os.ReadFile(p.Path); err == nil {
			f.Add(data)
		}
	}
	f.Add(gzTar(f, func(tw *tar.Writer) {
		tw.WriteHeader(&tar.Header{Name: "hooks/", Typeflag: tar.TypeDir, Mode: 0o755})
		tw.WriteHeader(&tar.Header{Name: "hooks/install", Typeflag: tar.TypeReg, Mode: 0o755, Size: 3})
		tw.Write([]byte("#!\n"))
	}))
	f.Add(gzTar(f, func(tw *tar.Writer) {
		tw.WriteHeader(&tar.Header{Name: "a", Typeflag: tar.TypeReg, Mode: 0o644, Size: 1})
		tw.Write([]byte("x"))
		tw.WriteHeader(&tar.Header{Name: "../evil", Typeflag: tar.TypeReg, Mode: 0o644})
	}))
	f.Add(gzTar(f, func(tw *tar.Writer) {
		tw.WriteHeader(&tar.Header{Name: "l", Typeflag: tar.TypeSymlink, Linkname: "/etc"})
	}))
	f.Add(gzTar(f, func(tw *tar.Writer) {
		tw.WriteHeader(&tar.Header{Name: "dispatch", Typeflag: tar.TypeReg, Mode: 0o755, Size: 3})
		tw.Write([]byte("#!\n"))
		tw.WriteHeader(&tar.Header{Name: "hooks/install", Typeflag: tar.TypeSymlink, Linkname: "../dispatch"})
		tw.WriteHeader(&tar.Header{Name: "hooks/up", Typeflag: tar.TypeSymlink, Linkname: "../.."})
		tw.WriteHeader(&tar.Header{Name: "hooks/up/x", Typeflag: tar.TypeReg, Mode: 0o644})
	}))
	f.Add([]byte{0x1f, 0x8b, 0, 0})
	f.Add([]byte("not an archive"))
	f.Fuzz(func(t *testing.T, data []byte) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "charm")
		err := extract(data, dir, limits{bytes: 1 << 20, entries: 200})
		checkExtracted(t, parent, dir, err)
	})
}

// checkExtracted fails unless an extraction into dir (in parent, empty
// before) that returned err wrote nothing when it refused, and otherwise
// only dir, holding files, directories and links that stay inside it.
func checkExtracted(t *testing.T, parent, dir string, err error) {
	t.Helper()
	ents, rerr := os.ReadDir(parent)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if err != nil {
		if len(ents) != 0 {
			t.Fatalf("refused (%v) but left %s behind", err, ents[0].Name())
		}
		return
	}
	if len(ents) != 1 || ents[0].Name() != filepath.Base(dir) {
		t.Fatalf("wrote outside the target: %v", ents)
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		switch {
		case err != nil || d.IsDir() || d.Type().IsRegular():
		case d.Type()&os.ModeSymlink != 0:
			if real, err := filepath.EvalSymlinks(p); err == nil && !within(root, real) {
				t.Errorf("%s leads out of the charm to %s", p, real)
			}
		default:
			t.Errorf("%s is neither a file, a directory nor a link", p)
		}
		return nil
	})
}
