package charm

import (
	"archive/zip"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// zipEntry is one entry of a test archive: a file (body), a directory
// (name ending in /), or with mode set any other kind (a symlink's body is
// its target).
type testZipEntry struct {
	name string
	mode fs.FileMode
	body string
}

// buildZip writes entries as charmcraft's Python zipfile does: Unix
// modes in the external attributes, deflated bodies.
func buildZip(t testing.TB, entries []testZipEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		mode := e.mode
		if mode == 0 {
			mode = 0o644
			if strings.HasSuffix(e.name, "/") {
				mode = fs.ModeDir | 0o755
			}
		}
		h.SetMode(mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// dispatchScript is the dispatch charmcraft writes.
const dispatchScript = `#!/bin/sh
JUJU_DISPATCH_PATH="${JUJU_DISPATCH_PATH:-$0}" PYTHONPATH=lib:venv exec ./src/charm.py
`

// charmcraftEntries is an ops charm as charmcraft packs it: dispatch runs
// src/charm.py; hooks/ holds copies of dispatch (Python's zipfile follows
// the links charmcraft makes), venv/ the framework.
func charmcraftEntries(name string) []testZipEntry {
	return []testZipEntry{
		{name: "metadata.yaml", body: "name: " + name + "\nprovides:\n  db:\n    interface: pgsql\n"},
		{name: "config.yaml", body: "options:\n  port:\n    type: int\n    default: 5432\n"},
		{name: "manifest.yaml", body: "analysis: {}\nbases:\n- name: ubuntu\n  channel: '22.04'\n"},
		{name: "dispatch", mode: 0o755, body: dispatchScript},
		{name: "hooks/", mode: fs.ModeDir | 0o755},
		{name: "hooks/install", mode: 0o755, body: dispatchScript},
		{name: "hooks/start", mode: 0o755, body: dispatchScript},
		{name: "hooks/upgrade-charm", mode: fs.ModeSymlink | 0o777, body: "../dispatch"},
		{name: "src/charm.py", mode: 0o755, body: "#!/usr/bin/env python3\nimport ops\n"},
		{name: "venv/ops/__init__.py", body: "# the ops framework\n"},
		{name: "venv/ops/main.py", mode: 0o644 | fs.ModeSetuid, body: "def main(c): pass\n"},
	}
}

// writeFile writes data to dir/name and returns the path.
func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExtractCharmcraftArchive(t *testing.T) {
	cache := t.TempDir()
	archive := writeFile(t, t.TempDir(), "pg_ubuntu-22.04-amd64.charm", buildZip(t, charmcraftEntries("pg")))
	dir, err := ExtractArchive(archive, cache)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(dir) != filepath.Join(cache, extractedDir) || len(filepath.Base(dir)) != 64 {
		t.Errorf("extracted to %s, want %s/<sha256>", dir, filepath.Join(cache, extractedDir))
	}
	for name, want := range map[string]fs.FileMode{
		"dispatch":             0o755,
		"hooks/install":        0o755,
		"src/charm.py":         0o755,
		"metadata.yaml":        0o644,
		"venv/ops/main.py":     0o644, // the setuid bit is dropped
		"venv/ops/__init__.py": 0o644,
	} {
		fi, err := os.Lstat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s has mode %v, want %v", name, fi.Mode(), want)
		}
	}
	if target, err := os.Readlink(filepath.Join(dir, "hooks/upgrade-charm")); err != nil || target != "../dispatch" {
		t.Errorf("hooks/upgrade-charm: link to %q (%v), want ../dispatch", target, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "src/charm.py")); !strings.Contains(string(b), "import ops") {
		t.Errorf("src/charm.py holds %q", b)
	}
	// A second extraction finds the first: nothing is written again.
	marker := writeFile(t, dir, "marker", nil)
	again, err := ExtractArchive(archive, cache)
	if err != nil || again != dir {
		t.Fatalf("again: %s, %v", again, err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the extraction was redone: %v", err)
	}
	// What charmcraft built packs and reads like any charm directory.
	p, err := Pack(dir, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if p.Meta.Name != "pg" || !p.Legacy {
		t.Errorf("packed %+v", p)
	}
}

// TestExtractPackedArchive: what fixpoint charm pack --output writes
// (a tar.gz) may be named as a .charm too.
func TestExtractPackedArchive(t *testing.T) {
	p, err := Pack("testdata/oldcharm", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p.Path)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := ExtractArchive(writeFile(t, t.TempDir(), "old.charm", data), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	again, err := Pack(dir, t.TempDir())
	if err != nil || again.Hash != p.Hash {
		t.Errorf("extracted and packed again: %v, hash %s, want %s", err, again.Hash, p.Hash)
	}
}

func TestExtractArchiveRefusals(t *testing.T) {
	ok := testZipEntry{name: "metadata.yaml", body: "name: x\n"}
	for _, c := range []struct {
		name    string
		entries []testZipEntry
		want    string
	}{
		{"dot-dot", []testZipEntry{ok, {name: "../evil", body: "x"}}, "outside the charm directory"},
		{"dot-dot inside", []testZipEntry{ok, {name: "a/../../evil", body: "x"}}, "outside the charm directory"},
		{"absolute", []testZipEntry{ok, {name: "/etc/evil", body: "x"}}, "outside the charm directory"},
		{"backslash", []testZipEntry{ok, {name: `..\evil`, body: "x"}}, "outside the charm directory"},
		{"absolute link", []testZipEntry{ok, {name: "l", mode: fs.ModeSymlink | 0o777, body: "/etc/passwd"}}, "leads outside"},
		{"climbing link", []testZipEntry{ok, {name: "hooks/l", mode: fs.ModeSymlink | 0o777, body: "../../x"}}, "leads outside"},
		{"write through a link", []testZipEntry{ok, {name: "up", mode: fs.ModeSymlink | 0o777, body: ".."}, {name: "up/x", body: "x"}}, "leads outside"},
		{"fifo", []testZipEntry{ok, {name: "p", mode: fs.ModeNamedPipe | 0o644}}, "fifo"},
		{"device", []testZipEntry{ok, {name: "d", mode: fs.ModeDevice | fs.ModeCharDevice | 0o644}}, "device"},
		{"twice", []testZipEntry{ok, {name: "metadata.yaml", body: "name: y\n"}}, "more than once"},
		{"file then link", []testZipEntry{ok, {name: "a", body: "x"}, {name: "a", mode: fs.ModeSymlink | 0o777, body: "metadata.yaml"}}, "more than once"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cache := t.TempDir()
			archive := writeFile(t, t.TempDir(), "x.charm", buildZip(t, c.entries))
			_, err := ExtractArchive(archive, cache)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want %q", err, c.want)
			}
			if !strings.Contains(err.Error(), archive) {
				t.Errorf("error %q does not name the archive", err)
			}
			assertNothingExtracted(t, cache)
		})
	}
}

// assertNothingExtracted fails unless cache's extraction directory is
// empty: a refused archive leaves no directory, whole or half.
func assertNothingExtracted(t *testing.T, cache string) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(cache, extractedDir))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("left behind: %s", e.Name())
	}
}

func TestExtractArchiveCaps(t *testing.T) {
	t.Run("archive over MaxSize", func(t *testing.T) {
		cache := t.TempDir()
		name := sparseFile(t, "big.charm", MaxSize+1)
		if _, err := ExtractArchive(name, cache); err == nil || !strings.Contains(err.Error(), "larger than") {
			t.Fatalf("err %v", err)
		}
		assertNothingExtracted(t, cache)
	})
	t.Run("not a zip", func(t *testing.T) {
		archive := writeFile(t, t.TempDir(), "x.charm", []byte("PK not a zip"))
		if _, err := ExtractArchive(archive, t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a zip") {
			t.Fatalf("err %v", err)
		}
		archive = writeFile(t, t.TempDir(), "y.charm", []byte("neither"))
		if _, err := ExtractArchive(archive, t.TempDir()); err == nil || !strings.Contains(err.Error(), "charm archive") {
			t.Fatalf("err %v", err)
		}
	})
	entries := func(n int, size int) []testZipEntry {
		var es []testZipEntry
		for i := range n {
			es = append(es, testZipEntry{name: "f" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + "/" + string(rune('a'+i/26%26)) + string(rune('a'+i/676)), body: strings.Repeat("z", size)})
		}
		return es
	}
	t.Run("entries", func(t *testing.T) {
		parent := t.TempDir()
		err := extractWith(zipEntries, buildZip(t, entries(50, 1)), filepath.Join(parent, "charm"), limits{bytes: 1 << 20, entries: 20})
		if err == nil || !strings.Contains(err.Error(), "more than 20 entries") {
			t.Fatalf("err %v", err)
		}
		if ents, _ := os.ReadDir(parent); len(ents) != 0 {
			t.Errorf("left %v", ents)
		}
	})
	t.Run("bytes", func(t *testing.T) {
		// A deflated bomb: four files of a mebibyte of one byte each,
		// compressed to almost nothing.
		data := buildZip(t, entries(4, 1<<20))
		if len(data) > 64<<10 {
			t.Fatalf("the bomb is %d bytes", len(data))
		}
		parent := t.TempDir()
		err := extractWith(zipEntries, data, filepath.Join(parent, "charm"), limits{bytes: 2 << 20, entries: 100})
		if err == nil || !strings.Contains(err.Error(), "expands to more than") {
			t.Fatalf("err %v", err)
		}
		if ents, _ := os.ReadDir(parent); len(ents) != 0 {
			t.Errorf("left %v", ents)
		}
	})
	t.Run("one file", func(t *testing.T) {
		err := extractWith(zipEntries, buildZip(t, entries(1, 3<<20)), filepath.Join(t.TempDir(), "charm"), limits{bytes: 2 << 20, entries: 100})
		if err == nil || !strings.Contains(err.Error(), "expands to more than") {
			t.Fatalf("err %v", err)
		}
	})
}

// FuzzZip feeds the zip decoder arbitrary bytes: whatever it gets, it
// writes nothing outside the target, only files, directories and links
// that stay inside, and nothing at all when it refuses.
func FuzzZip(f *testing.F) {
	f.Add(buildZip(f, charmcraftEntries("pg")))
	f.Add(buildZip(f, []testZipEntry{{name: "a", body: "x"}, {name: "../evil", body: "x"}}))
	f.Add(buildZip(f, []testZipEntry{{name: "l", mode: fs.ModeSymlink | 0o777, body: "/etc"}}))
	f.Add(buildZip(f, []testZipEntry{{name: "up", mode: fs.ModeSymlink | 0o777, body: ".."}, {name: "up/x", body: "x"}}))
	f.Add(buildZip(f, []testZipEntry{{name: "p", mode: fs.ModeNamedPipe}}))
	f.Add([]byte("PK\x05\x06" + strings.Repeat("\x00", 18)))
	f.Add([]byte("not an archive"))
	f.Fuzz(func(t *testing.T, data []byte) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "charm")
		err := extractWith(zipEntries, data, dir, limits{bytes: 1 << 20, entries: 200})
		checkExtracted(t, parent, dir, err)
	})
}
