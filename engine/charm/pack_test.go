package charm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/schemas"
)

type entry struct {
	name  string
	mode  int64
	typ   byte
	owner string
}

// entries lists an archive's headers, failing on anything not fixed.
func entries(t *testing.T, archive string) []entry {
	t.Helper()
	data, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var out []entry
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if !h.ModTime.Equal(time.Unix(0, 0)) || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
			t.Errorf("%s: mtime %v uid %d gid %d uname %q gname %q, want all zero", h.Name, h.ModTime, h.Uid, h.Gid, h.Uname, h.Gname)
		}
		out = append(out, entry{name: h.Name, mode: h.Mode, typ: h.Typeflag})
	}
}

func TestPackGoCharmIsDeterministicAndCached(t *testing.T) {
	cache1, cache2 := t.TempDir(), t.TempDir()
	builds := goBuilds.Load()
	p1, err := Pack("testdata/gocharm", cache1)
	if err != nil {
		t.Fatal(err)
	}
	if got := goBuilds.Load() - builds; got != 1 {
		t.Errorf("first Pack ran go build %d times, want 1", got)
	}
	p2, err := Pack("testdata/gocharm", cache1)
	if err != nil {
		t.Fatal(err)
	}
	if got := goBuilds.Load() - builds; got != 1 {
		t.Errorf("second Pack rebuilt: %d builds in all, want 1", got)
	}
	// A fresh cache rebuilds, and the build is reproducible.
	p3, err := Pack("testdata/gocharm", cache2)
	if err != nil {
		t.Fatal(err)
	}
	if p1.Hash != p2.Hash || p1.Hash != p3.Hash {
		t.Fatalf("hashes differ: %s %s %s", p1.Hash, p2.Hash, p3.Hash)
	}
	if p1.Path != filepath.Join(cache1, p1.Hash+".tar.gz") || p3.Path != filepath.Join(cache2, p1.Hash+".tar.gz") {
		t.Errorf("paths %s, %s", p1.Path, p3.Path)
	}
	if fi, err := os.Stat(p1.Path); err != nil || fi.Size() != p1.Size {
		t.Errorf("archive %s: %v, size %d want %d", p1.Path, err, fi.Size(), p1.Size)
	}
	if p1.Legacy || p1.Meta.Name != "gocharm" || p1.Meta.Options["port"].Default != int64(8080) {
		t.Errorf("packed %+v", p1)
	}
	want := []entry{
		{name: "README", mode: 0o644, typ: tar.TypeReg},
		{name: "charm.cue", mode: 0o644, typ: tar.TypeReg},
		{name: "hooks/", mode: 0o755, typ: tar.TypeDir},
		{name: "hooks/reconcile", mode: 0o755, typ: tar.TypeReg},
	}
	if got := entries(t, p1.Path); !reflect.DeepEqual(got, want) {
		t.Errorf("archive holds\n%v\nwant\n%v", got, want)
	}
	c := p1.Charm("./gocharm")
	if c.Hash != p1.Hash || c.Source != "./gocharm" || c.Size != p1.Size || c.Meta.Name != "gocharm" {
		t.Errorf("Charm() = %+v", c)
	}
}

func TestPackLegacyCharm(t *testing.T) {
	p1, err := Pack("testdata/oldcharm", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p2, err := Pack("testdata/oldcharm", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if p1.Hash != p2.Hash {
		t.Errorf("hashes differ: %s %s", p1.Hash, p2.Hash)
	}
	if !p1.Legacy || p1.Meta.Requires["db"].Interface != "mysql" {
		t.Errorf("packed %+v", p1)
	}
	// Hooks are executable in the archive even if not on disk.
	want := []entry{
		{name: "config.yaml", mode: 0o644, typ: tar.TypeReg},
		{name: "hooks/", mode: 0o755, typ: tar.TypeDir},
		{name: "hooks/install", mode: 0o755, typ: tar.TypeReg},
		{name: "metadata.yaml", mode: 0o644, typ: tar.TypeReg},
	}
	if got := entries(t, p1.Path); !reflect.DeepEqual(got, want) {
		t.Errorf("archive holds\n%v\nwant\n%v", got, want)
	}
}

// tempCharm makes a charm directory inside this module (go build must
// find go.mod), removed when the test ends.
func tempCharm(t *testing.T, files map[string]string) string {
	t.Helper()
	dir, err := os.MkdirTemp("testdata", "tmp-charm-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestPackErrors(t *testing.T) {
	t.Run("build failure quotes the compiler", func(t *testing.T) {
		dir := tempCharm(t, map[string]string{
			"charm.cue":   `name: "broken"`,
			"src/main.go": "package main\n\nfunc main() { undefinedThing() }\n",
		})
		_, err := Pack(dir, t.TempDir())
		if err == nil || !strings.Contains(err.Error(), "undefined: undefinedThing") || !strings.Contains(err.Error(), "main.go:3:") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("src and hooks/reconcile", func(t *testing.T) {
		dir := tempCharm(t, map[string]string{
			"charm.cue":       `name: "both"`,
			"src/main.go":     "package main\n\nfunc main() {}\n",
			"hooks/reconcile": "#!/bin/sh\n",
		})
		if _, err := Pack(dir, t.TempDir()); err == nil || !strings.Contains(err.Error(), "remove one of them") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("bad metadata", func(t *testing.T) {
		dir := tempCharm(t, map[string]string{"charm.cue": `summary: "no name"`})
		_, err := Pack(dir, t.TempDir())
		var se *schemas.Error
		if !errors.As(err, &se) || !strings.Contains(err.Error(), "name: is missing") {
			t.Errorf("err = %v", err)
		}
	})
}

// TestPackReusesTheArchiveOfUnchangedContents: packing the same contents
// again takes the archive packed before instead of compressing anew, and
// that archive is byte for byte what compressing the tar as a stream
// gives, so charms keep the hashes they had; a damaged archive or changed
// contents are packed afresh.
func TestPackReusesTheArchiveOfUnchangedContents(t *testing.T) {
	dir := tempCharm(t, map[string]string{
		"metadata.yaml": "name: reused\nsummary: s\ndescription: d\n",
		"hooks/install": "#!/bin/sh\necho installed\n",
	})
	cache := t.TempDir()
	before := compressions.Load()
	p1, err := Pack(dir, cache)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := Pack(dir, cache)
	if err != nil {
		t.Fatal(err)
	}
	if n := compressions.Load() - before; n != 1 {
		t.Fatalf("two packs of the same contents compressed %d times; want 1", n)
	}
	if !reflect.DeepEqual(p1, p2) {
		t.Fatalf("the second pack gave %+v; want what the first gave, %+v", p2, p1)
	}

	// The archive is what a tar streamed through gzip gives.
	data, err := os.ReadFile(p1.Path)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tarball, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var streamed bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&streamed, gzip.BestCompression)
	for rest := tarball; len(rest) > 0; {
		n := min(len(rest), 100)
		if _, err := zw.Write(rest[:n]); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(streamed.Bytes(), data) {
		t.Fatal("the archive differs from the tar gzipped as a stream: every charm's hash would change")
	}

	// A damaged archive is not reused.
	if err := os.WriteFile(p1.Path, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	p3, err := Pack(dir, cache)
	if err != nil {
		t.Fatal(err)
	}
	if n := compressions.Load() - before; n != 2 || !reflect.DeepEqual(p3, p1) {
		t.Fatalf("after the archive was cut short: %d compressions, packed %+v; want 2 and %+v", n, p3, p1)
	}
	if again, err := os.ReadFile(p1.Path); err != nil || !bytes.Equal(again, data) {
		t.Fatalf("the damaged archive was not written whole again (%v)", err)
	}

	// Changed contents are a new archive.
	if err := os.WriteFile(filepath.Join(dir, "hooks/install"), []byte("#!/bin/sh\necho changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p4, err := Pack(dir, cache)
	if err != nil {
		t.Fatal(err)
	}
	if n := compressions.Load() - before; n != 3 || p4.Hash == p1.Hash {
		t.Fatalf("after a hook changed: %d compressions, hash %s (was %s); want 3 and a new hash", n, p4.Hash, p1.Hash)
	}
}
