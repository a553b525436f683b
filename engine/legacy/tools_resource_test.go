package legacy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
)

// TestResourceGetPrintsThePath: resource-get prints the path the agent
// gave the resource, without a newline, as Juju's; a resource the
// environment does not provide fails the hook with Juju's error.
func TestResourceGetPrintsThePath(t *testing.T) {
	file := filepath.Join(t.TempDir(), "app.tgz")
	if err := os.WriteFile(file, []byte("v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	with := func(o *Options) { o.Resources = map[string]string{"software": file} }
	forEachShell(t, func(t *testing.T, shell func(*Options)) {
		charm := writeCharm(t, map[string]string{"install": `resource-get software > "$FIXPOINT_UNIT_DIR/path"; head -n1 "$(resource-get software)" > "$FIXPOINT_UNIT_DIR/first"`})
		u := testUniverse()
		u.Events = []charmapi.Event{ev("install", "", "", "", "")}
		if _, _, unitDir, err := runHooks(t, charm, u, shell, with); err != nil {
			t.Fatal(err)
		} else {
			if got := readUnitFile(t, unitDir, "path"); got != file {
				t.Errorf("resource-get printed %q; want %q with no newline", got, file)
			}
			if got := readUnitFile(t, unitDir, "first"); got != "v1\n" {
				t.Errorf("the file resource-get named holds %q", got)
			}
		}
		charm = writeCharm(t, map[string]string{"install": `resource-get other`})
		_, _, _, err := runHooks(t, charm, u, shell, with)
		var herr *HookError
		if !errors.As(err, &herr) {
			t.Fatalf("a resource not provided: err = %v; want the hook to fail", err)
		}
		if want := `ERROR could not download resource: resource "other" not found`; !strings.Contains(herr.Stderr, want) {
			t.Errorf("stderr %q lacks Juju's %q", herr.Stderr, want)
		}
	})
}
