package model

import (
	"slices"
	"strings"
	"testing"
)

// storeCharms is a charm with a single data store, a logs store of 0 to 3
// instances and a block store, and an upgrade of it that adds a cache.
func storeCharms() map[string]*Charm {
	meta := CharmMeta{Name: "store", Storage: map[string]StorageMeta{
		"data": {Type: StorageFilesystem, Location: "/srv/data", Min: 1, Max: 1},
		"logs": {Type: StorageFilesystem, Min: 0, Max: 3},
		"disk": {Type: StorageBlock, Min: 1, Max: 1},
	}}
	up := meta
	up.Storage = map[string]StorageMeta{"cache": {Type: StorageFilesystem, Min: 1, Max: -1}}
	for k, v := range meta.Storage {
		up.Storage[k] = v
	}
	return map[string]*Charm{"h-store": {Hash: "h-store", Meta: meta}, "h-store2": {Hash: "h-store2", Meta: up}}
}

func storeEnv(hash string, units int, logs *int) *Environment {
	spec := ServiceSpec{Charm: "./store", CharmHash: hash, Units: intp(units)}
	if logs != nil {
		spec.Storage = map[string]StorageSpec{"logs": {Count: logs}}
	}
	return &Environment{APIVersion: APIVersion, Name: "stores", Services: map[string]ServiceSpec{"store": spec}}
}

func storeDeploy(e *Environment) *Command {
	return &Command{Op: OpDeploy, Deploy: &Deploy{Env: *e, Charms: storeCharms()}}
}

func TestParseStorageRange(t *testing.T) {
	for in, want := range map[string][2]int{"1": {1, 1}, "0-": {0, -1}, "2+": {2, -1}, "1-3": {1, 3}, " 4 ": {4, 4}} {
		min, max, err := ParseStorageRange(in)
		if err != nil || min != want[0] || max != want[1] {
			t.Errorf("ParseStorageRange(%q) = %d, %d, %v; want %v", in, min, max, err, want)
		}
	}
	for _, in := range []string{"", "-1", "3-1", "a", "1-2-3", "99999"} {
		if _, _, err := ParseStorageRange(in); err == nil {
			t.Errorf("ParseStorageRange(%q) accepted", in)
		}
	}
}

// TestStorageCreatedWithTheUnit checks each unit's instances at deploy:
// the environment's count or the range's minimum, numbered in one
// sequence for the whole environment, no block store.
func TestStorageCreatedWithTheUnit(t *testing.T) {
	s := NewState()
	apply(t, s, 1, storeDeploy(storeEnv("h-store", 2, intp(2))))
	for unit, want := range map[string][]string{"store/0": {"data/0", "logs/1", "logs/2"}, "store/1": {"data/3", "logs/4", "logs/5"}} {
		if got := s.Units[unit].Storage; !slices.Equal(got, want) {
			t.Errorf("%s storage %v; want %v", unit, got, want)
		}
	}
	// Defaults: one data, no logs (range 0-3).
	s = NewState()
	apply(t, s, 1, storeDeploy(storeEnv("h-store", 1, nil)))
	if got := s.Units["store/0"].Storage; !slices.Equal(got, []string{"data/0"}) {
		t.Errorf("default storage %v; want [data/0]", got)
	}
	// A higher count attaches more to the unit there; a lower one
	// detaches nothing; a unit added later starts from the count.
	plan := Plan(s, mustResolve(t, storeEnv("h-store", 2, intp(1))))
	if !slices.ContainsFunc(plan, func(c Change) bool { return c.String() == "~ service store storage logs count default -> 1" }) {
		t.Errorf("plan %v lacks the storage count change", plan)
	}
	apply(t, s, 2, storeDeploy(storeEnv("h-store", 2, intp(1))))
	if got := s.Units["store/0"].Storage; !slices.Equal(got, []string{"data/0", "logs/1"}) {
		t.Errorf("after count 1: store/0 storage %v", got)
	}
	if got := s.Units["store/1"].Storage; !slices.Equal(got, []string{"data/2", "logs/3"}) {
		t.Errorf("after count 1: store/1 storage %v", got)
	}
	apply(t, s, 3, storeDeploy(storeEnv("h-store", 2, intp(0))))
	if got := s.Units["store/0"].Storage; len(got) != 2 {
		t.Errorf("a lower count detached storage: %v", got)
	}
	// An upgrade whose charm declares a new store attaches it.
	apply(t, s, 4, storeDeploy(storeEnv("h-store2", 2, intp(0))))
	if got := s.Units["store/0"].Storage; !slices.Equal(got, []string{"data/0", "logs/1", "cache/4"}) {
		t.Errorf("after upgrade: store/0 storage %v", got)
	}
}

func mustResolve(t *testing.T, e *Environment) *Desired {
	t.Helper()
	d, err := Resolve(e, storeCharms())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestStorageCountOutsideRangeRefused checks the environment's counts:
// within the charm's range, of a store it declares, not a block store;
// the problem names the path.
func TestStorageCountOutsideRangeRefused(t *testing.T) {
	for _, c := range []struct {
		spec map[string]StorageSpec
		want string
	}{
		{map[string]StorageSpec{"logs": {Count: intp(4)}}, "services.store.storage.logs.count: count 4 is outside the charm's range 0-3"},
		{map[string]StorageSpec{"data": {Count: intp(0)}}, "services.store.storage.data.count: count 0 is outside the charm's range 1"},
		{map[string]StorageSpec{"disk": {Count: intp(1)}}, "services.store.storage.disk.count: the store is of type \"block\""},
		{map[string]StorageSpec{"cache": {Count: intp(1)}}, "services.store.storage.cache: charm store declares no storage \"cache\" (it declares: data, disk, logs)"},
	} {
		e := storeEnv("h-store", 1, nil)
		spec := e.Services["store"]
		spec.Storage = c.spec
		e.Services["store"] = spec
		_, err := Resolve(e, storeCharms())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v; want %q", c.spec, err, c.want)
		}
	}
	unbounded := StorageMeta{Type: StorageFilesystem, Min: 0, Max: -1}
	if err := unbounded.CheckCount(MaxUnitStorage + 1); err == nil {
		t.Errorf("a count above MaxUnitStorage accepted")
	}
}

// TestStorageAddWithinRange checks a hook's storage-add: applied within
// the range, refused (with why) beyond it or for an unknown or block
// store, and never for a dying unit.
func TestStorageAddWithinRange(t *testing.T) {
	s := NewState()
	apply(t, s, 1, storeDeploy(storeEnv("h-store", 1, nil)))
	add := func(idx uint64, a map[string]int) *Response {
		return apply(t, s, idx, &Command{Op: OpResults, Results: []Result{{Unit: "store/0", Hash: "x", Seen: &Seen{Life: Alive}, StorageAdd: a}}})
	}
	add(2, map[string]int{"logs": 2})
	if got := s.Units["store/0"].Storage; !slices.Equal(got, []string{"data/0", "logs/1", "logs/2"}) {
		t.Fatalf("after storage-add logs=2: %v", got)
	}
	resp := add(3, map[string]int{"logs": 2, "data": 1, "nope": 1, "disk": 1})
	if got := s.Units["store/0"].Storage; len(got) != 3 {
		t.Errorf("storage-add beyond the range attached: %v", got)
	}
	why := strings.Join(resp.Skipped, "\n")
	for _, want := range []string{"storage-add logs=2: 2 attached; the range 0-3 allows at most 3", "storage-add data=1: 1 attached; the range 1 allows at most 1",
		"storage-add nope: the charm declares no such storage", "storage-add disk: a block store is not attached"} {
		if !strings.Contains(why, want) {
			t.Errorf("skipped %q; want it to say %q", why, want)
		}
	}
	if err := (&Result{Unit: "store/0", StorageAdd: map[string]int{"logs": 0}}).check(); err == nil {
		t.Errorf("a storage-add of 0 passed the command check")
	}
	if err := (&Result{Unit: "store/0", StorageAdd: map[string]int{"Bad Name": 1}}).check(); err == nil {
		t.Errorf("a storage-add of a malformed name passed the command check")
	}
}

func TestCheckStorageID(t *testing.T) {
	for _, id := range []string{"data/0", "pg-data/12"} {
		if err := CheckStorageID(id); err != nil {
			t.Errorf("CheckStorageID(%q): %v", id, err)
		}
	}
	for _, id := range []string{"", "data", "data/", "data/01", "/0", "../0", "data/0/1", "data/-1", "Data/0"} {
		if CheckStorageID(id) == nil {
			t.Errorf("CheckStorageID(%q) accepted", id)
		}
	}
}

// FuzzStorageRange holds ParseStorageRange (which reads charm metadata)
// to its contract: no panic, and bounds it accepts are ordered.
func FuzzStorageRange(f *testing.F) {
	for _, s := range []string{"1", "0-", "2+", "1-3", "3-1", "", "9999-99999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		min, max, err := ParseStorageRange(s)
		if err == nil && (min < 0 || max < -1 || max >= 0 && max < min) {
			t.Fatalf("%q: accepted %d..%d", s, min, max)
		}
		if CheckStorageID(s) == nil && !strings.Contains(s, "/") {
			t.Fatalf("%q: accepted as a storage id", s)
		}
	})
}
