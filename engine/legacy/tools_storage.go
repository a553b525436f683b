package legacy

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/schemas"
)

// Juju's storage hook tools (worker/uniter/runner/jujuc/storage-*.go) over
// the unit's instances as its universe lists them. storage-add goes into
// the result: the control plane attaches the instances within the
// charm's range, and the unit's next reconcile runs their
// storage-attached hooks.

func init() {
	tools["storage-get"] = tool{flags: []flagDef{{name: "s"}, formatFlag}, run: inputsTool((*inputs).storageGet), keep: keepHook}
	tools["storage-list"] = tool{flags: []flagDef{formatFlag}, run: inputsTool((*inputs).storageList), keep: keepHook}
	tools["storage-add"] = tool{run: writesOverInputsTool((*hookWrites).storageAdd), write: true}
}

// storageEnv sets a storage hook's variables as Juju's context does.
func storageEnv(env map[string]string, all []charmapi.Storage, id string) {
	env["JUJU_STORAGE_ID"] = id
	for _, st := range all {
		if st.ID == id {
			env["JUJU_STORAGE_LOCATION"] = st.Location
			env["JUJU_STORAGE_KIND"] = st.Kind
		}
	}
}

// storage finds one of the unit's instances by id.
func (in *inputs) storage(id string) (charmapi.Storage, bool) {
	for _, st := range in.u.Storage {
		if st.ID == id {
			return st, true
		}
	}
	return charmapi.Storage{}, false
}

// storageGet is `storage-get [-s ID] [KEY]`: the instance of the running
// storage hook, or the one -s names; kind and location, or the one KEY.
func (in *inputs) storageGet(c *call) (any, error) {
	id := c.event().Storage
	if c.f.has("s") {
		id = c.f.str("s")
		if model.CheckStorageID(id) != nil {
			return nil, usagef("invalid value %q for option -s: invalid storage ID %q", id, id)
		}
		if _, ok := in.storage(id); !ok {
			return nil, usagef("invalid value %q for option -s: storage %s not found", id, id)
		}
	}
	if id == "" {
		return nil, usagef("no storage instance specified")
	}
	if len(c.f.args) > 1 {
		return nil, checkEmpty(c.f.args[1:])
	}
	st, ok := in.storage(id)
	if !ok {
		return nil, usagef("storage %s not found", id)
	}
	values := map[string]any{"kind": st.Kind, "location": st.Location}
	if len(c.f.args) == 0 {
		return values, nil
	}
	v, ok := values[c.f.args[0]]
	if !ok {
		return nil, fmt.Errorf("invalid storage attribute %q", c.f.args[0])
	}
	return v, nil
}

// storageList is `storage-list [NAME]`: the ids of the unit's instances.
func (in *inputs) storageList(c *call) (any, error) {
	if len(c.f.args) > 1 {
		return nil, checkEmpty(c.f.args[1:])
	}
	ids := []string{}
	for _, st := range in.u.Storage {
		if len(c.f.args) == 0 || st.Name == c.f.args[0] {
			ids = append(ids, st.ID)
		}
	}
	return ids, nil
}

// storageAdd is `storage-add NAME[=COUNT] ...`: COUNT more instances of
// each store (default 1), carried by the result. Juju's directives also
// take a pool and a size; a unit's instances here are directories, so
// only a count is accepted, as Juju's own storage-add insists.
func (w *hookWrites) storageAdd(in *inputs, c *call) (any, error) {
	if len(c.f.args) == 0 {
		return nil, usagef("storage add requires a storage directive")
	}
	add := map[string]int{}
	for _, a := range c.f.args {
		name, count, hasCount := strings.Cut(a, "=")
		if err := model.CheckName(model.KindStorage, name); err != nil {
			return nil, usagef("cannot parse storage directive %q: %v", a, err)
		}
		n := 1
		if hasCount {
			v, err := strconv.Atoi(count)
			if err != nil {
				return nil, usagef("only count can be specified for %q", name)
			}
			if v < 1 {
				return nil, usagef("cannot parse storage directive %q: count must be greater than zero", a)
			}
			n = v
		}
		add[name] += n
	}
	stores, err := in.declaredStores()
	if err != nil {
		return nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(add)) {
		if !stores[name] {
			// Juju's state refuses it when the hook's context is
			// flushed; here the call itself fails, before anything is
			// recorded, so that the hook sees it where it asked.
			return nil, fmt.Errorf("adding %q storage to %s: charm storage %q not found", name, in.u.Unit, name)
		}
	}
	for name, n := range add {
		if total := w.storageAsked[name] + n; total > model.MaxUnitStorage {
			return nil, usagef("storage-add %s: %d instances asked for in one hook run; the limit is %d", name, total, model.MaxUnitStorage)
		}
	}
	if w.storageAsked == nil {
		w.storageAsked = map[string]int{}
	}
	for name, n := range add {
		w.storageAsked[name] += n
	}
	return noOutput{}, nil
}

// declaredStores are the stores the charm's metadata declares, read once
// per session.
func (in *inputs) declaredStores() (map[string]bool, error) {
	if in.stores != nil {
		return in.stores, nil
	}
	if in.charmDir == "" {
		return nil, fmt.Errorf("storage-add: the charm's directory is not known, so its stores are not")
	}
	meta, err := schemas.LoadCharmMeta(in.charmDir)
	if err != nil {
		return nil, fmt.Errorf("storage-add: read the charm's metadata: %w", err)
	}
	in.stores = map[string]bool{}
	for name := range meta.Storage {
		in.stores[name] = true
	}
	return in.stores, nil
}
