package schemas

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/model"
)

// TestCharmResources: metadata.yaml's resources load, a resource without
// a type is a file (Juju's default), and a type fixpoint does not provide
// is an error at its line.
func TestCharmResources(t *testing.T) {
	dir := t.TempDir()
	meta := "name: res\nresources:\n  payload:\n    type: file\n    filename: payload.txt\n  extra:\n    description: no type\n"
	if err := os.WriteFile(filepath.Join(dir, MetadataFile), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := LoadCharmMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]model.Resource{"payload": {Type: "file", Filename: "payload.txt"}, "extra": {Type: "file", Description: "no type"}}
	if len(m.Resources) != 2 || m.Resources["payload"] != want["payload"] || m.Resources["extra"] != want["extra"] {
		t.Errorf("resources %+v; want %+v", m.Resources, want)
	}
	if w, err := JujuFeatures(dir); err != nil || len(w) != 0 {
		t.Errorf("a charm with resources warns %v, %v; fixpoint provides them", w, err)
	}

	craft := t.TempDir()
	body := "name: res\ntype: charm\nresources:\n  image:\n    type: oci-image\n"
	if err := os.WriteFile(filepath.Join(craft, CharmcraftFile), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadCharmMeta(craft)
	if err == nil || !strings.Contains(err.Error(), "charmcraft.yaml:5:") || !strings.Contains(err.Error(), `resource type must be "file"`) {
		t.Errorf("an oci-image resource: %v", err)
	}
}
