package model

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Storage, as Juju has it for machine charms, on one machine: a charm
// declares named stores (metadata.yaml's storage:); every unit gets its
// instances, numbered per environment ("data/0", "logs/1") as Juju numbers
// them, and the agent gives each a directory of its own. Only filesystem
// stores are attached: fixpoint has no block devices.

// Storage kinds a charm may declare.
const (
	StorageFilesystem = "filesystem"
	StorageBlock      = "block"
)

// KindStorage names a charm's store in name errors.
const KindStorage NameKind = "storage"

// MaxUnitStorage bounds the storage instances one unit holds, whatever a
// charm's range ("0-" has no upper end) or its storage-add calls ask.
const MaxUnitStorage = 32

// StorageMeta is one store a charm declares.
type StorageMeta struct {
	// Type is "filesystem" or "block"; only filesystem stores attach.
	Type        string `json:"type"`
	Description string `json:"description,omitempty"`
	// Location is where Juju mounts the store; fixpoint reports it in
	// the metadata only (an instance's location is its directory).
	Location string `json:"location,omitempty"`
	// MinimumSize is kept as written ("1G"): a directory has no size.
	MinimumSize string `json:"minimum-size,omitempty"`
	// Min and Max are the instance count range; Max -1 has no upper end.
	// A store without multiple: has exactly one.
	Min      int  `json:"min"`
	Max      int  `json:"max"`
	ReadOnly bool `json:"read-only,omitempty"`
	Shared   bool `json:"shared,omitempty"`
}

// storageRange is Juju's multiple.range: "N", "N-", "N+" or "N-M"
// (charm/meta.go, parseStorageMultiple).
var storageRange = regexp.MustCompile(`^([0-9]{1,4})(-|\+|-([0-9]{1,4}))?$`)

// ParseStorageRange reads a multiple.range; max is -1 for no upper end.
func ParseStorageRange(s string) (min, max int, err error) {
	m := storageRange.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, 0, fmt.Errorf("storage range %s is not N, N-, N+ or N-M (e.g. \"1-3\")", Quote(s, 24))
	}
	min, _ = strconv.Atoi(m[1])
	switch {
	case m[2] == "":
		max = min
	case m[3] != "":
		max, _ = strconv.Atoi(m[3])
	default:
		max = -1
	}
	if max != -1 && max < min {
		return 0, 0, fmt.Errorf("storage range %s runs backwards: write the lower count first", Quote(s, 24))
	}
	return min, max, nil
}

// Bound is the most instances a unit may hold of the store: its range's
// upper end, or MaxUnitStorage where it has none or a larger one.
func (m StorageMeta) Bound() int {
	if m.Max < 0 || m.Max > MaxUnitStorage {
		return MaxUnitStorage
	}
	return m.Max
}

// RangeString writes the range as Juju does: "1", "0-", "1-3".
func (m StorageMeta) RangeString() string {
	switch {
	case m.Max < 0:
		return fmt.Sprintf("%d-", m.Min)
	case m.Max == m.Min:
		return strconv.Itoa(m.Min)
	}
	return fmt.Sprintf("%d-%d", m.Min, m.Max)
}

// CheckCount checks an instance count the environment asks of the store.
func (m StorageMeta) CheckCount(n int) error {
	switch {
	case m.Type != StorageFilesystem:
		return fmt.Errorf("the store is of type %s, which fixpoint does not attach (no block devices); only filesystem stores have instances", Quote(m.Type, 24))
	case n < m.Min || m.Max >= 0 && n > m.Max:
		return fmt.Errorf("count %d is outside the charm's range %s for this store", n, m.RangeString())
	case n > MaxUnitStorage:
		return fmt.Errorf("count %d is above fixpoint's limit of %d instances per unit", n, MaxUnitStorage)
	}
	return nil
}

// validateStorage checks the stores a charm declares.
func (m *CharmMeta) validateStorage() error {
	for _, n := range sortedKeys(m.Storage) {
		st := m.Storage[n]
		if err := CheckName(KindStorage, n); err != nil {
			return fmt.Errorf("charm %s: %w", m.Name, err)
		}
		if st.Type != StorageFilesystem && st.Type != StorageBlock {
			return fmt.Errorf("charm %s: storage %q has type %s; use filesystem or block", m.Name, n, Quote(st.Type, 24))
		}
		if st.Min < 0 || st.Max < -1 || st.Max >= 0 && st.Max < st.Min {
			return fmt.Errorf("charm %s: storage %q has range %d..%d; write N, N-, or N-M with N <= M", m.Name, n, st.Min, st.Max)
		}
		if st.Min > MaxUnitStorage {
			return fmt.Errorf("charm %s: storage %q needs at least %d instances; fixpoint attaches at most %d per unit", m.Name, n, st.Min, MaxUnitStorage)
		}
		if len(st.Location) > 4096 || len(st.Description) > 4096 || len(st.MinimumSize) > 64 {
			return fmt.Errorf("charm %s: storage %q: location, description or minimum-size too long", m.Name, n)
		}
	}
	if len(m.Storage) > MaxUnitStorage {
		return fmt.Errorf("charm %s declares %d stores; the limit is %d", m.Name, len(m.Storage), MaxUnitStorage)
	}
	return nil
}

// StorageName is the store of instance id "name/N".
func StorageName(id string) string {
	name, _, _ := strings.Cut(id, "/")
	return name
}

// StorageCount counts u's instances of the store.
func (u *Unit) StorageCount(name string) int {
	n := 0
	for _, id := range u.Storage {
		if StorageName(id) == name {
			n++
		}
	}
	return n
}

// resolveStorage checks the environment's storage counts of one service
// against its charm; the counts it returns are those the environment set.
func resolveStorage(path []string, spec map[string]StorageSpec, meta *CharmMeta, ps *Problems) map[string]int {
	if len(spec) == 0 {
		return nil
	}
	out := map[string]int{}
	for _, n := range sortedKeys(spec) {
		p := append(append([]string(nil), path...), "storage", n)
		st, ok := meta.Storage[n]
		if !ok {
			ps.add(p, "charm %s declares no storage %q (it declares: %s)", meta.Name, n, listOr(sortedKeys(meta.Storage)))
			continue
		}
		if spec[n].Count == nil {
			continue
		}
		if err := st.CheckCount(*spec[n].Count); err != nil {
			ps.add(append(p, "count"), "%v", err)
			continue
		}
		out[n] = *spec[n].Count
	}
	return out
}

// StorageSpec is what the environment sets for one store of a service.
type StorageSpec struct {
	// Count is how many instances each unit gets; default the charm's
	// minimum (1 for a store without multiple:).
	Count *int `json:"count,omitempty"`
}

// wantStorage is how many instances of the store a unit of svc should
// have: the environment's count, or the range's minimum.
func wantStorage(svc *Service, name string, st StorageMeta) int {
	if n, ok := svc.Storage[name]; ok {
		return n
	}
	return st.Min
}

// ensureStorage attaches to u the instances its charm's filesystem stores
// and its service's counts call for that it lacks. It never detaches one:
// a count lowered or a store dropped by an upgrade leaves the unit's data
// where it is. It reports whether it attached any.
func (s *State) ensureStorage(u *Unit) bool {
	svc := s.Services[u.Service]
	if svc == nil || u.Life != Alive {
		return false
	}
	ch := s.Charms[svc.Charm]
	if ch == nil || len(ch.Meta.Storage) == 0 {
		return false
	}
	var add []string
	for _, n := range sortedKeys(ch.Meta.Storage) {
		st := ch.Meta.Storage[n]
		if st.Type != StorageFilesystem {
			continue
		}
		for have := u.StorageCount(n); have < min(wantStorage(svc, n, st), st.Bound()) && len(u.Storage)+len(add) < MaxUnitStorage; have++ {
			add = append(add, s.newStorageID(n))
		}
	}
	if len(add) == 0 {
		return false
	}
	// A new slice: a snapshot being written may share the old one.
	u.Storage = append(slices.Clip(u.Storage), add...)
	return true
}

// newStorageID numbers an instance of the store as Juju does: one
// sequence for the whole environment, whatever the store.
func (s *State) newStorageID(name string) string {
	id := fmt.Sprintf("%s/%d", name, s.NextStorage)
	s.NextStorage++
	return id
}

// addStorage carries out a hook's storage-add: count more instances of
// each store, within the charm's range. It returns why it refused any.
func (s *State) addStorage(u *Unit, add map[string]int) []string {
	svc := s.Services[u.Service]
	var ch *Charm
	if svc != nil {
		ch = s.Charms[svc.Charm]
	}
	var skipped []string
	for _, n := range sortedKeys(add) {
		var st StorageMeta
		ok := false
		if ch != nil {
			st, ok = ch.Meta.Storage[n]
		}
		switch {
		case !ok:
			skipped = append(skipped, fmt.Sprintf("storage-add %s: the charm declares no such storage", n))
			continue
		case st.Type != StorageFilesystem:
			skipped = append(skipped, fmt.Sprintf("storage-add %s: a %s store is not attached (no block devices)", n, st.Type))
			continue
		}
		have := u.StorageCount(n)
		if have+add[n] > st.Bound() || len(u.Storage)+add[n] > MaxUnitStorage {
			skipped = append(skipped, fmt.Sprintf("storage-add %s=%d: %d attached; the range %s allows at most %d (fixpoint: %d per unit)", n, add[n], have, st.RangeString(), st.Bound(), MaxUnitStorage))
			continue
		}
		ids := slices.Clip(u.Storage)
		for range add[n] {
			ids = append(ids, s.newStorageID(n))
		}
		u.Storage = ids
	}
	return skipped
}

// CheckStorageAdd checks a hook's storage-add requests, before the charm
// is known: names well formed, counts 1 to MaxUnitStorage.
func CheckStorageAdd(add map[string]int) error {
	if len(add) > MaxUnitStorage {
		return fmt.Errorf("storage_add names %d stores; the limit is %d", len(add), MaxUnitStorage)
	}
	for _, n := range sortedKeys(add) {
		if err := CheckName(KindStorage, n); err != nil {
			return fmt.Errorf("storage_add: %w", err)
		}
		if c := add[n]; c < 1 || c > MaxUnitStorage {
			return fmt.Errorf("storage_add.%s: count %d; it must be 1 to %d", n, c, MaxUnitStorage)
		}
	}
	return nil
}

// ensureServiceStorage attaches what its charm and counts call for to
// every alive unit of svc.
func (s *State) ensureServiceStorage(svc *Service) {
	for _, u := range s.UnitsOf(svc.Name) {
		s.ensureStorage(u)
	}
}

// storageChanges lists the stores whose count the environment moved; a
// count left out is "default" (the range's minimum).
func storageChanges(svc string, cur, want map[string]int) []Change {
	var out []Change
	show := func(m map[string]int, k string) string {
		if n, ok := m[k]; ok {
			return strconv.Itoa(n)
		}
		return "default"
	}
	keys := sortedKeys(cur)
	for _, k := range sortedKeys(want) {
		if _, ok := cur[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if o, n := show(cur, k), show(want, k); o != n {
			out = append(out, Change{Kind: SetStorage, Service: svc, Key: k, Old: o, New: n})
		}
	}
	return out
}

// CheckStorageID checks an instance id, "name/N": a store name and a
// decimal number without leading zeros.
func CheckStorageID(id string) error {
	name, num, ok := strings.Cut(id, "/")
	if !ok {
		return fmt.Errorf("storage id %s is not \"name/N\", e.g. \"data/0\"", Quote(id, 24))
	}
	if err := CheckName(KindStorage, name); err != nil {
		return fmt.Errorf("storage id %s: %w", Quote(id, 24), err)
	}
	if num == "" || len(num) > 9 || num[0] == '0' && num != "0" || strings.Trim(num, "0123456789") != "" {
		return fmt.Errorf("storage id %s: the number after / is not a plain decimal", Quote(id, 24))
	}
	return nil
}
