package charm

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUnpackRoundTrip(t *testing.T) {
	p, err := Pack("testdata/oldcharm", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "unit")
	if err := Unpack(p.Path, p.Hash, dir); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "hooks", "install"))
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("hooks/install: %v %v", fi, err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "metadata.yaml"))
	want, _ := os.ReadFile("testdata/oldcharm/metadata.yaml")
	if !bytes.Equal(got, want) {
		t.Errorf("metadata.yaml differs after the round trip")
	}
	// Unpacking again over the same directory works.
	if err := Unpack(p.Path, p.Hash, dir); err != nil {
		t.Errorf("second unpack: %v", err)
	}
}

func TestUnpackRejectsATamperedArchive(t *testing.T) {
	p, err := Pack("testdata/oldcharm", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p.Path)
	data[len(data)/2] ^= 0xff
	bad := filepath.Join(t.TempDir(), "bad.tar.gz")
	if err := os.WriteFile(bad, data, 0o644); err != nil {
		t.Fatal(err)
	}
	err = Unpack(bad, p.Hash, t.TempDir())
	sum := sha256.Sum256(data)
	if err == nil || !strings.Contains(err.Error(), p.Hash) || !strings.Contains(err.Error(), hex.EncodeToString(sum[:])) {
		t.Errorf("err = %v, want both hashes named", err)
	}
}

// craft writes a plain tar with the given headers and returns its path
// and hash.
func craft(t *testing.T, hdrs ...*tar.Header) (string, string) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range hdrs {
		if h.Typeflag == tar.TypeReg {
			h.Size = 2
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write([]byte("x\n"))
		}
	}
	tw.Close()
	name := filepath.Join(t.TempDir(), "a.tar")
	if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return name, hex.EncodeToString(sum[:])
}

func TestUnpackRejectsEscapes(t *testing.T) {
	for _, c := range []struct {
		name string
		hdrs []*tar.Header
		want string
	}{
		{"dotdot", []*tar.Header{{Name: "../evil", Typeflag: tar.TypeReg, Mode: 0o644}}, "outside the charm directory"},
		{"nested dotdot", []*tar.Header{{Name: "hooks/../../evil", Typeflag: tar.TypeReg, Mode: 0o644}}, "outside the charm directory"},
		{"absolute", []*tar.Header{{Name: "/tmp/evil", Typeflag: tar.TypeReg, Mode: 0o644}}, "outside the charm directory"},
		{"symlink", []*tar.Header{{Name: "hooks", Typeflag: tar.TypeSymlink, Linkname: "/etc"}}, "symlink"},
		{"hard link", []*tar.Header{{Name: "x", Typeflag: tar.TypeLink, Linkname: "/etc/passwd"}}, "hard link"},
	} {
		t.Run(c.name, func(t *testing.T) {
			archive, hash := craft(t, c.hdrs...)
			parent := t.TempDir()
			err := Unpack(archive, hash, filepath.Join(parent, "charm"))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
			if _, err := os.Stat(filepath.Join(parent, "evil")); err == nil {
				t.Errorf("a file was written outside the target")
			}
		})
	}
	// A symlink already in the target does not carry files out of it.
	archive, hash := craft(t, &tar.Header{Name: "hooks/install", Typeflag: tar.TypeReg, Mode: 0o755})
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "hooks")); err != nil {
		t.Fatal(err)
	}
	if err := Unpack(archive, hash, dir); err == nil || !strings.Contains(err.Error(), "through a symlink") {
		t.Errorf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "install")); err == nil {
		t.Errorf("a file was written through the symlink")
	}
}

func TestUnpackRejectsOversizedArchives(t *testing.T) {
	// The size check comes before the bytes are read and hashed.
	name := sparseFile(t, "big.tar", MaxSize+1)
	if err := Unpack(name, "whatever", t.TempDir()); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("err = %v", err)
	}
}

// sparseFile makes a file of size bytes that uses no disk (a hole) and
// returns its path.
func sparseFile(t *testing.T, name string, size int64) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	return p
}
