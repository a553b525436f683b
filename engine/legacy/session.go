package legacy

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/charmapi"
)

// session is the hook context of one Run: the universe as it was when the
// call began, what the hooks wrote since, and which hook is running. Tool
// calls arrive concurrently (a hook may background them), so everything
// is behind mu.
type session struct {
	mu  sync.Mutex
	log hclog.Logger

	u    *charmapi.Universe
	rels map[string]*charmapi.Relation // by ident
	// ghosts are relations events name that the universe no longer has
	// (departed and broken hooks of a relation that is gone): readable as
	// empty, writes dropped.
	ghosts map[string]ghost

	local      map[string]map[string]string // ident → resulting own bag, once written
	app        map[string]map[string]string // ident → resulting service bag, once written
	leaderData map[string]string            // resulting leader data, once written
	status     *charmapi.Status             // current, for status-get
	statusSet  bool                         // status-set was called: status goes in the result
	appStatus  *charmapi.Status
	ports      map[string]bool
	portsSet   bool

	// members is the unit's view of each relation's membership (see
	// initialMembers): the remote units whose joined hook has been
	// committed and whose departed hook has not.
	members map[string]map[string]bool

	cur *hookContext // the hook running now; nil between hooks
	// gen counts the calls of tools that write (Response.Gen): a caller
	// that kept an answer from an older generation asks again, whichever
	// process of the hook wrote.
	gen uint64

	modelUUID string    // JUJU_MODEL_UUID, for relation-model-get
	started   time.Time // when the call began: goal-state's "since"
	// state is the unit's private map with this call's writes
	// (application status and version live there: the result has no
	// field of its own for them); stateSet says it was written.
	state    map[string]string
	stateSet bool

	// resources are the local paths of the unit's resource files by
	// name, for resource-get.
	resources map[string]string
	// storageAdd is what storage-add asked for, per store.
	storageAdd map[string]int
	// charmDir is the unpacked charm, whose metadata names the stores
	// storage-add may add to; stores is that list once read.
	charmDir string
	stores   map[string]bool
	// action is the running action (RunAction); nil in hooks, where the
	// action tools fail.
	action *actionContext
	// sec is the call's secrets once a secret tool ran (tools_secret.go).
	sec *secretWork
	// net is the machine whose interfaces network-get reports.
	net netHost
	// boot is what juju-reboot asked (tools_reboot.go).
	boot reboot
}

// ghost is a relation known only from an event.
type ghost struct{ endpoint, remoteApp string }

// hookContext is one hook run, as its tools see it.
type hookContext struct {
	id    string
	event charmapi.Event
}

// newSession copies u, so that the hooks read the universe as it was when
// the call began whatever the caller does with it meanwhile.
func newSession(u *charmapi.Universe, status *charmapi.Status, ports []string, log hclog.Logger) (*session, error) {
	b, err := json.Marshal(u)
	if err != nil {
		return nil, fmt.Errorf("copy universe: %w", err)
	}
	var c charmapi.Universe
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("copy universe: %w", err)
	}
	s := &session{
		log:     log,
		u:       &c,
		rels:    map[string]*charmapi.Relation{},
		ghosts:  map[string]ghost{},
		local:   map[string]map[string]string{},
		app:     map[string]map[string]string{},
		ports:   map[string]bool{},
		started: time.Now().UTC(),
		state:   c.State,
		net:     hostNetwork{},
	}
	for i := range c.Relations {
		r := &c.Relations[i]
		if r.Ident == "" {
			r.Ident = r.Name + ":" + strconv.Itoa(r.ID)
		}
		s.rels[r.Ident] = r
	}
	for _, ev := range c.Events {
		if ev.Relation == "" {
			continue
		}
		if _, ok := s.rels[ev.Relation]; !ok {
			ep, _, _ := strings.Cut(ev.Relation, ":")
			s.ghosts[ev.Relation] = ghost{endpoint: ep, remoteApp: ev.RemoteApp}
		}
	}
	s.members = initialMembers(s.rels, c.Events)
	if status != nil {
		st := *status
		s.status = &st
	}
	for _, p := range ports {
		norm, err := parseEntry(p)
		if err != nil {
			return nil, fmt.Errorf("current ports: %w", err)
		}
		s.ports[norm] = true
	}
	return s, nil
}

// begin makes ev the running hook; tool calls must name id.
func (s *session) begin(id string, ev charmapi.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur = &hookContext{id: id, event: ev}
}

// end closes the running hook's context: its stragglers are refused.
func (s *session) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur = nil
}

// relationByID finds a relation (or ghost) by "endpoint:id" or bare id;
// like Juju, only the number counts.
func (s *session) relationByID(value string) (string, bool) {
	num := value
	if i := strings.LastIndexByte(value, ':'); i >= 0 {
		num = value[i+1:]
	}
	id, err := strconv.Atoi(num)
	if err != nil {
		return "", false
	}
	for ident, r := range s.rels {
		if r.ID == id {
			return ident, true
		}
	}
	for ident := range s.ghosts {
		if strings.HasSuffix(ident, ":"+strconv.Itoa(id)) {
			return ident, true
		}
	}
	return "", false
}

// localBag is the unit's own settings in ident, with its writes.
func (s *session) localBag(ident string) map[string]string {
	if b, ok := s.local[ident]; ok {
		return b
	}
	if r, ok := s.rels[ident]; ok {
		return r.Local
	}
	// A relation the unit is leaving: its own data while it is still in
	// it, as Juju's relation-get answers in -departed and -broken.
	return s.u.Leaving[ident]
}

// appBag is the unit's own service's bag in ident, with its writes.
func (s *session) appBag(ident string) map[string]string {
	if b, ok := s.app[ident]; ok {
		return b
	}
	if r, ok := s.rels[ident]; ok {
		return r.App
	}
	return nil
}

// write applies settings to a bag copy-on-write: an empty value deletes,
// as relation-set and leader-set do in Juju.
func write(cur map[string]string, settings map[string]string) map[string]string {
	out := maps.Clone(cur)
	if out == nil {
		out = map[string]string{}
	}
	for k, v := range settings {
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// result is what the hooks wrote, in the reconcile result's terms: every
// relation written is listed with its whole resulting bag (a listed bag
// replaces the stored one), leader data and ports likewise, status as
// last set. The unit's private state is listed whole once a tool wrote it
// (state-set, status-set --application, application-version-set).
func (s *session) result() *charmapi.Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	res := &charmapi.Result{}
	for _, ident := range slices.Sorted(maps.Keys(s.local)) {
		res.SetLocal(ident, maps.Clone(s.local[ident]))
	}
	for _, ident := range slices.Sorted(maps.Keys(s.app)) {
		res.SetApp(ident, maps.Clone(s.app[ident]))
	}
	if s.leaderData != nil {
		res.LeaderData = maps.Clone(s.leaderData)
	}
	if s.status != nil && s.statusSet {
		st := *s.status
		res.Status = &st
	}
	if s.portsSet {
		res.Ports = sortPorts(s.ports)
	}
	if s.stateSet {
		res.State = maps.Clone(s.state)
	}
	if len(s.storageAdd) > 0 {
		res.StorageAdd = maps.Clone(s.storageAdd)
	}
	if s.sec != nil && len(s.sec.changes) > 0 {
		res.Secrets = slices.Clone(s.sec.changes)
	}
	res.Reboot = s.boot.asked
	return res
}
