package legacy

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// inputs are what a run reads and never writes: the universe as it was
// when the call began, its relations by ident, and where the unit's charm,
// resources and network are. The tools that only read them are its
// methods.
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

// inputsTool runs a hook tool that only reads the run's inputs.
func inputsTool(run func(in *inputs, c *call) (any, error)) func(s *session, c *call) (any, error) {
	return func(s *session, c *call) (any, error) { return run(&s.in, c) }
}

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

// relationArg is the relation a relation tool works on: -r, or the hook's
// own relation (JUJU_RELATION_ID), as in Juju.
func (in *inputs) relationArg(c *call) (string, error) {
	if c.f.has("relation") {
		v := c.f.str("relation")
		ident, ok := in.relationByID(v)
		if !ok {
			return "", usagef("invalid value %q for flag -r: relation not found", v)
		}
		return ident, nil
	}
	if ident := c.event().Relation; ident != "" {
		return ident, nil
	}
	return "", usagef("no relation id specified")
}

// remoteService is the service on the other side of ident.
func (in *inputs) remoteService(ident string) string {
	if r, ok := in.rels[ident]; ok {
		return r.RemoteService
	}
	return in.ghosts[ident].remoteApp
}

// isPeer reports whether ident is a peer relation.
func (in *inputs) isPeer(ident string) bool {
	r, ok := in.rels[ident]
	return ok && (r.Role == "peer" || r.RemoteService == in.u.Service)
}

// mayManage refuses a secret the unit may not manage.
func (in *inputs) mayManage(sec *charmapi.Secret) error {
	switch sec.Owner {
	case "":
		return fmt.Errorf("permission denied: %s does not own secret %s", in.u.Unit, sec.ID)
	case model.SecretOwnerApp:
		if !in.u.Leader {
			return fmt.Errorf("permission denied: secret %s is owned by %s and this unit is not the leader", sec.ID, in.u.Service)
		}
	}
	return nil
}
