package schedule

import (
	"slices"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// withDeparted fills each relation's departed map in uni: the members the
// unit saw in its last successful reconcile (seen) that are no longer in
// the relation, with their last settings as the state still has them
// (model.State.DepartedSettings). The cached universe is shared, so the
// relations are copied before any is changed; a universe with nothing
// departed is returned as it is.
func withDeparted(st *model.State, uni charmapi.Universe, seen *model.Seen) charmapi.Universe {
	if seen == nil {
		return uni
	}
	copied := false
	for i := range uni.Relations {
		r := &uni.Relations[i]
		sr := seen.Relations.Get(r.ID)
		if sr == nil {
			continue
		}
		var departed map[string]map[string]string
		for name := range sr.Members.All() {
			if _, still := r.Units[name]; still {
				continue
			}
			data, ok := st.DepartedSettings(r.ID, name)
			if !ok {
				continue
			}
			if departed == nil {
				departed = map[string]map[string]string{}
			}
			if data == nil {
				data = map[string]string{}
			}
			departed[name] = data
		}
		if departed == nil {
			continue
		}
		if !copied {
			uni.Relations = slices.Clone(uni.Relations)
			r, copied = &uni.Relations[i], true
		}
		r.Departed = departed
	}
	return uni
}
