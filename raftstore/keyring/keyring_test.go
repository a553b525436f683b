package keyring

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeyringSealOpen pins the keyring's rules: a sealed content opens
// only for its own secret (aad), under a key the ring holds, and a
// rotated ring still opens what the old key sealed.
func TestKeyringSealOpen(t *testing.T) {
	dir := t.TempDir()
	k, err := Open(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := k.Seal("a", []byte("value"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := k.Open("a", sealed); err != nil || string(got) != "value" {
		t.Fatalf("open = %q, %v", got, err)
	}
	if _, err := k.Open("b", sealed); err == nil {
		t.Error("opened under another secret's aad")
	}
	other, err := Open(t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Open("a", sealed); err == nil || !strings.Contains(err.Error(), "does not hold") {
		t.Errorf("another cluster's key: %v", err)
	}
	id, key, err := k.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	if err := k.AddKey(id, key); err != nil {
		t.Fatal(err)
	}
	again, err := Open(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if again.Current() != id {
		t.Errorf("current key %s after rotation, want %s", again.Current(), id)
	}
	if got, err := again.Open("a", sealed); err != nil || string(got) != "value" {
		t.Errorf("old content after rotation: %q, %v", got, err)
	}
}

// TestKeyFileIsPrivate: the key file is the owner's only, and a memory
// keyring writes none.
func TestKeyFileIsPrivate(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(dir, true); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v %v", KeyFile, fi, err)
	}
	k, err := NewMemoryKeyring()
	if err != nil || k.Empty() {
		t.Fatalf("memory keyring: %v", err)
	}
	if err := k.AddKey("0123456789abcdef", make([]byte, 32)); err != nil {
		t.Fatalf("a memory keyring keeps a new key without a file: %v", err)
	}
}
