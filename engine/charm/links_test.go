package charm

import (
	"archive/tar"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTree makes files (name → content; an "-> target" content makes a
// symlink) under a new directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(body, "-> "); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(body, "#!") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestPackCharmcraftLayout packs a charm laid out as charmcraft packs an
// ops charm: dispatch at the root, hooks/ symlinks to it, Python in src/
// (not Go: shipped, not built) and libraries in venv/. The links travel
// as links and come out as links; a link leading out of the charm is
// followed, as before.
func TestPackCharmcraftLayout(t *testing.T) {
	outside := writeTree(t, map[string]string{"shared.txt": "from outside"})
	dir := writeTree(t, map[string]string{
		"metadata.yaml":        "name: opsy\n",
		"dispatch":             "#!/bin/sh\nexec ./src/charm.py\n",
		"hooks/install":        "-> ../dispatch",
		"hooks/start":          "-> ../dispatch",
		"hooks/upgrade-charm":  "-> ../dispatch",
		"src/charm.py":         "#!/usr/bin/python3\nprint('hi')\n",
		"venv/ops/__init__.py": "",
		"lib":                  "-> venv",
		"outside.txt":          "-> " + filepath.Join(outside, "shared.txt"),
		"climbs":               "-> hooks/../dispatch",
	})
	p, err := Pack(dir, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !p.Legacy {
		t.Error("a charm with dispatch and Python in src/ packed as a reconcile charm")
	}
	got := map[string]entry{}
	for _, e := range entries(t, p.Path) {
		got[e.name] = e
	}
	for _, name := range []string{"hooks/install", "hooks/start", "hooks/upgrade-charm", "lib"} {
		if got[name].typ != tar.TypeSymlink {
			t.Errorf("%s packed as type %q; want a symlink", name, got[name].typ)
		}
	}
	// A ".." after a name is followed rather than trusted.
	for _, name := range []string{"src/charm.py", "dispatch", "outside.txt", "venv/ops/__init__.py", "climbs"} {
		if got[name].typ != tar.TypeReg {
			t.Errorf("%s packed as type %q; want a regular file", name, got[name].typ)
		}
	}
	if _, ok := got["hooks/reconcile"]; ok {
		t.Error("Python in src/ was built as a Go reconcile hook")
	}

	out := filepath.Join(t.TempDir(), "charm")
	if err := Unpack(p.Path, p.Hash, out); err != nil {
		t.Fatal(err)
	}
	if target, err := os.Readlink(filepath.Join(out, "hooks", "install")); err != nil || target != "../dispatch" {
		t.Errorf("unpacked hooks/install = %q, %v; want a link to ../dispatch", target, err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "hooks", "start")); err != nil || !strings.Contains(string(b), "src/charm.py") {
		t.Errorf("hooks/start does not lead to dispatch: %q, %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "outside.txt")); err != nil || string(b) != "from outside" {
		t.Errorf("outside.txt = %q, %v; want the followed content", b, err)
	}
	if fi, err := os.Stat(filepath.Join(out, "src", "charm.py")); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("src/charm.py unpacked as %v, %v; want an executable file", fi, err)
	}
}

func TestUnpackRejectsLinksLeadingOut(t *testing.T) {
	for _, c := range []struct {
		name string
		hdrs []*tar.Header
	}{
		{"absolute", []*tar.Header{{Name: "hooks", Typeflag: tar.TypeSymlink, Linkname: "/etc"}}},
		{"climbs out", []*tar.Header{{Name: "x", Typeflag: tar.TypeSymlink, Linkname: "../x"}}},
		{"climbs out from below", []*tar.Header{{Name: "a/", Typeflag: tar.TypeDir, Mode: 0o755}, {Name: "a/x", Typeflag: tar.TypeSymlink, Linkname: "../../x"}}},
		// d is the root itself, so d/x climbing one level leaves the
		// charm although the names read as if it stayed inside.
		{"through a link to the root", []*tar.Header{{Name: "d", Typeflag: tar.TypeSymlink, Linkname: "."}, {Name: "d/x", Typeflag: tar.TypeSymlink, Linkname: "../evil"}}},
		{"dotdot after a name", []*tar.Header{{Name: "d", Typeflag: tar.TypeSymlink, Linkname: "."}, {Name: "x", Typeflag: tar.TypeSymlink, Linkname: "d/.."}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			archive, hash := craft(t, c.hdrs...)
			err := Unpack(archive, hash, filepath.Join(t.TempDir(), "charm"))
			if err == nil || !strings.Contains(err.Error(), "outside the charm directory") {
				t.Errorf("err = %v; want a link leading outside refused", err)
			}
		})
	}
}
