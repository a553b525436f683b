package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// resMeta declares a payload resource, given by the tests, and an extra
// one nobody provides.
var resMeta = model.CharmMeta{Name: "res", Resources: map[string]model.Resource{
	"payload": {Type: model.ResourceFile, Filename: "payload.txt"},
	"extra":   {Type: model.ResourceFile},
}}

// readPayload is a Go charm that shows its payload's digest, as the
// universe lists it, and the first line of the file, found relative to
// its directory as a hook process finds it relative to its working
// directory; a file for extra would be an error.
func readPayload(u *charmapi.Universe) (*charmapi.Result, error) {
	data, err := os.ReadFile(u.File(filepath.Join("resources", "payload", "payload.txt")))
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(u.File(filepath.Join("resources", "extra"))); err == nil || u.Resources["extra"] != "" {
		return nil, os.ErrExist
	}
	first, _, _ := strings.Cut(string(data), "\n")
	return charmapi.NewResult().Activef("%s %s", first, u.Resources["payload"]), nil
}

// TestResourcesReachTheUnits: a resource the environment gives a service
// is in every unit's universe by digest and in its directory as
// resources/<name>/<filename>, and the report names it.
func TestResourcesReachTheUnits(t *testing.T) {
	content := "first line\nsecond\n"
	file := filepath.Join(t.TempDir(), "payload.txt")
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(content))
	digest := hex.EncodeToString(sum[:])
	env := NewEnv("res")
	env.DeployMeta("res", resMeta).Units(2).Resource("payload", file)
	env.Hook("res", Func(readPayload))
	work := t.TempDir()
	rep := converges(t, env, Options{Schedules: 3, WorkDir: work})
	for _, unit := range []string{"res/0", "res/1"} {
		if got, want := rep.FixedPoints[0].Settings[unit+" status"], "active: first line "+digest; got != want {
			t.Errorf("%s status = %q; want %q", unit, got, want)
		}
	}
	if want := "resources: res payload " + model.ShortHash(digest) + "\n"; !strings.Contains(rep.String(), want) {
		t.Errorf("the report does not name the resource (%q):\n%s", want, rep)
	}
	// The work directory's read-only copy is replaced, not written into,
	// by a second run.
	converges(t, env, Options{Schedules: 1, WorkDir: work})
}

// TestResourceSetupErrors: a file that cannot be a resource, a name the
// charm does not declare and a file changed after it was read stop the
// simulation, each named.
func TestResourceSetupErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "payload.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, want string
	}{
		{"payload", filepath.Join(t.TempDir(), "nothere"), `resource "payload": file `},
		{"payload", t.TempDir(), "is not a regular file"},
		{"other", file, `charm res declares no resource "other"`},
	} {
		env := NewEnv("res")
		env.DeployMeta("res", resMeta).Resource(tc.name, tc.path)
		env.Hook("res", Func(readPayload))
		if _, err := env.Simulate(t.Context(), Options{Schedules: 1}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("resource %s at %s: %v; want %q", tc.name, tc.path, err, tc.want)
		}
	}

	env := NewEnv("res")
	env.DeployMeta("res", resMeta).Resource("payload", file)
	env.Hook("res", Func(readPayload))
	if err := os.WriteFile(file, []byte("y"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Simulate(t.Context(), Options{Schedules: 1}); err == nil || !strings.Contains(err.Error(), "changed since it was read") {
		t.Errorf("a file changed after Resource read it: %v", err)
	}
}
