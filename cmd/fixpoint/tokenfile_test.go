package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --token showed the operator's and the join token in ps; --token-file
// reads it from a file only its owner may read.
func TestTokenFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good", "  abc123\n", 0o600)
	if tok, err := readTokenFile(good); err != nil || tok != "abc123" {
		t.Errorf("0600 file: %q, %v; want the trimmed token", tok, err)
	}
	for _, c := range []struct {
		name, content string
		mode          os.FileMode
		want          string
	}{
		{"world", "abc\n", 0o644, "chmod 600"},
		{"group", "abc\n", 0o640, "chmod 600"},
		{"groupwrite", "abc\n", 0o620, "chmod 600"},
		{"empty", " \n", 0o600, "is empty"},
		{"two", "abc def\n", 0o600, "one token"},
		{"big", strings.Repeat("a", maxTokenFile+1), 0o600, "larger than"},
	} {
		if tok, err := readTokenFile(write(c.name, c.content, c.mode)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %q, %v; want an error with %q", c.name, tok, err, c.want)
		}
	}
	if _, err := readTokenFile(filepath.Join(dir, "missing")); err == nil {
		t.Errorf("a missing file was accepted")
	}
	if _, err := tokenFrom("abc", good); err == nil || !strings.Contains(err.Error(), "exclude each other") {
		t.Errorf("--token with --token-file: %v", err)
	}
	t.Setenv("FIXPOINT_TOKEN", "fromenv")
	if tok, err := tokenFrom("", good); err != nil || tok != "abc123" {
		t.Errorf("the file comes before the environment: %q, %v", tok, err)
	}
	if tok, err := tokenFrom("", ""); err != nil || tok != "fromenv" {
		t.Errorf("the environment without flags: %q, %v", tok, err)
	}
}

// A backup holds relation passwords: it is written 0600, and an existing
// world-readable file is narrowed.
func TestCreatePrivate(t *testing.T) {
	p := filepath.Join(t.TempDir(), "backup.json")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := createPrivate(p)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("{}")
	f.Close()
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != 2 {
		t.Errorf("%v %v: want 0600 and the new content only", fi, err)
	}
}
