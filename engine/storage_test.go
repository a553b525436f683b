package engine

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// TestUniverseListsStorage checks a unit's universe and Seen carry its
// storage instances, a dying unit's too (its detaching hooks need them),
// and that a storage-add the unit asked for makes its universe new.
func TestUniverseListsStorage(t *testing.T) {
	s := newMemStore()
	charms := map[string]*model.Charm{"h-st": {Hash: "h-st", Meta: model.CharmMeta{Name: "st", Storage: map[string]model.StorageMeta{
		"data": {Type: model.StorageFilesystem, Min: 1, Max: 1}, "logs": {Type: model.StorageFilesystem, Min: 0, Max: 2}}}}}
	env := model.Environment{APIVersion: model.APIVersion, Name: "st", Services: map[string]model.ServiceSpec{"st": {CharmHash: "h-st", Units: intp(1)}}}
	ctx := context.Background()
	if _, err := s.Apply(ctx, &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: "m", Address: "10.0.0.9"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(ctx, &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}}); err != nil {
		t.Fatal(err)
	}
	var uni *charmapi.Universe
	var seen *model.Seen
	_ = s.View(func(st *model.State) error { uni, seen = Build(st, "st/0"); return nil })
	if len(uni.Storage) != 1 || uni.Storage[0] != (charmapi.Storage{ID: "data/0", Name: "data", Kind: "filesystem"}) || !slices.Equal(seen.Storage, []string{"data/0"}) {
		t.Fatalf("universe storage %+v, seen %v", uni.Storage, seen.Storage)
	}
	before := hashOf(s, "st/0")
	if _, err := s.Apply(ctx, &model.Command{Op: model.OpResults, Results: []model.Result{{Unit: "st/0", Hash: before, Seen: seen, StorageAdd: map[string]int{"logs": 1}}}}); err != nil {
		t.Fatal(err)
	}
	if hashOf(s, "st/0") == before {
		t.Errorf("storage-add left the unit's universe hash as it was: its storage-attached hook would not run")
	}
	env.Services["st"] = model.ServiceSpec{CharmHash: "h-st", Units: intp(0)}
	if _, err := s.Apply(ctx, &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}}); err != nil {
		t.Fatal(err)
	}
	_ = s.View(func(st *model.State) error { uni, _ = Build(st, "st/0"); return nil })
	if uni == nil {
		t.Fatal("st/0 is gone before its last reconcile")
	}
	if uni.Life != "dying" || len(uni.Storage) != 2 {
		t.Errorf("dying universe: life %s storage %+v; want both instances", uni.Life, uni.Storage)
	}
}

// TestAttachStorage checks the directories: made 0700 under base, kept
// with their contents when made again, a malformed id refused, and the
// universe given left as it was.
func TestAttachStorage(t *testing.T) {
	base := t.TempDir()
	u := &charmapi.Universe{Unit: "st/0", Storage: []charmapi.Storage{{ID: "data/0", Name: "data", Kind: "filesystem"}, {ID: "logs/3", Name: "logs", Kind: "filesystem"}}}
	got, err := AttachStorage(base, u)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(base, "logs", "3")
	if got.Storage[1].Location != want || u.Storage[1].Location != "" {
		t.Fatalf("location %q (given universe %q); want %q on a copy", got.Storage[1].Location, u.Storage[1].Location, want)
	}
	if fi, err := os.Stat(want); err != nil || fi.Mode().Perm() != 0o700 || !fi.IsDir() {
		t.Fatalf("%s: %v %v; want a 0700 directory", want, err, fi)
	}
	if err := os.WriteFile(filepath.Join(want, "kept"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := AttachStorage(base, u); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(want, "kept")); err != nil {
		t.Errorf("attaching again lost the data: %v", err)
	}
	for _, id := range []string{"../0", "data/../../x", "data"} {
		bad := &charmapi.Universe{Storage: []charmapi.Storage{{ID: id}}}
		if _, err := AttachStorage(base, bad); err == nil {
			t.Errorf("id %q accepted", id)
		}
	}
}
