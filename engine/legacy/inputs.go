package legacy

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
)

// inputs are what a run reads and never writes: the universe as it was
// when the call began, its relations by ident, and where the unit's charm,
// resources and network are.
type inputs struct {
	u    *charmapi.Universe
	rels map[string]*charmapi.Relation // by ident
	// ghosts are relations events name that the universe no longer has
	// (departed and broken hooks of a relation that is gone): readable as
	// empty, writes dropped.
	ghosts map[string]ghost

	modelUUID string    // JUJU_MODEL_UUID, for relation-model-get
	started   time.Time // when the call began: goal-state's "since"
	// resources are the local paths of the unit's resource files by
	// name, for resource-get.
	resources map[string]string
	// charmDir is the unpacked charm, whose metadata names the stores
	// storage-add may add to; stores is that list once read.
	charmDir string
	stores   map[string]bool
	// net is the machine whose interfaces network-get reports.
	net netHost
}

// ghost is a relation known only from an event.
type ghost struct{ endpoint, remoteApp string }

// newInputs copies u, so that the hooks read the universe as it was when
// the call began whatever the caller does with it meanwhile.
func newInputs(u *charmapi.Universe) (inputs, error) {
	b, err := json.Marshal(u)
	if err != nil {
		return inputs{}, fmt.Errorf("copy universe: %w", err)
	}
	var c charmapi.Universe
	if err := json.Unmarshal(b, &c); err != nil {
		return inputs{}, fmt.Errorf("copy universe: %w", err)
	}
	in := inputs{
		u:       &c,
		rels:    map[string]*charmapi.Relation{},
		ghosts:  map[string]ghost{},
		started: time.Now().UTC(),
		net:     hostNetwork{},
	}
	for i := range c.Relations {
		r := &c.Relations[i]
		if r.Ident == "" {
			r.Ident = r.Name + ":" + strconv.Itoa(r.ID)
		}
		in.rels[r.Ident] = r
	}
	for _, ev := range c.Events {
		if ev.Relation == "" {
			continue
		}
		if _, ok := in.rels[ev.Relation]; !ok {
			ep, _, _ := strings.Cut(ev.Relation, ":")
			in.ghosts[ev.Relation] = ghost{endpoint: ep, remoteApp: ev.RemoteApp}
		}
	}
	return in, nil
}

// relationByID finds a relation (or ghost) by "endpoint:id" or bare id;
// like Juju, only the number counts.
func (in *inputs) relationByID(value string) (string, bool) {
	num := value
	if i := strings.LastIndexByte(value, ':'); i >= 0 {
		num = value[i+1:]
	}
	id, err := strconv.Atoi(num)
	if err != nil {
		return "", false
	}
	for ident, r := range in.rels {
		if r.ID == id {
			return ident, true
		}
	}
	for ident := range in.ghosts {
		if strings.HasSuffix(ident, ":"+strconv.Itoa(id)) {
			return ident, true
		}
	}
	return "", false
}
