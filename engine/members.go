package engine

import (
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/unijson"
	"github.com/fixpoint/fixpoint/model"
)

// member is one relation member's settings as the universes that show it
// hold them, made once and shared read-only by every one of them: a
// change of an n-unit peer service builds n universes of n-1 members
// each, and only the members that changed are made again.
type member struct {
	name string
	// bag and addr are what data was made from; a member whose settings
	// or address changed since is made again (side.member).
	bag  *model.Bag
	addr string
	// data is withAddress(bagData(bag), addr). Nothing may write into
	// it: universes are read, encoded and hashed, and every change is
	// made on a copy (TestUniverseMapsAreNotWritten).
	data map[string]string
	// hashed is the member's part of a universe's hash encoding (its
	// name and data), made by the first universe hashed with it and
	// shared by every universe that shows the member; it lives as long
	// as the member, which universes hold (side.slots).
	hashed atomic.Pointer[[]byte]
	// encoded is the member as a universe's JSON shows it among its
	// relation's units, made by the first universe encoded with it:
	// shared by every universe that shows the member, so encoding a
	// universe appends its members' bytes rather than encoding them.
	encoded atomic.Pointer[[]byte]
}

// jsonEncoding returns the member's part of a universe's JSON
// (unijson.AppendMember).
func (m *member) jsonEncoding() []byte {
	return kept(&m.encoded, func() []byte { return unijson.AppendMember(nil, m.name, m.data) })
}

// kept returns the bytes p holds, encoded and kept there if it holds
// none. Several processors may ask at once; each encodes the same bytes.
func kept(p *atomic.Pointer[[]byte], encode func() []byte) []byte {
	if b := p.Load(); b != nil {
		return *b
	}
	b := encode()
	p.Store(&b)
	return b
}

// appendUnits is the unijson.Units of a universe whose relations'
// members build found (members[i] for its i-th relation, in name
// order): each member's kept encoding, in order.
func appendUnits(members [][]*member) unijson.Units {
	return func(b []byte, i int, r *charmapi.Relation) ([]byte, bool) {
		if i >= len(members) || r.Units == nil || len(members[i]) != len(r.Units) {
			return b, false
		}
		b = append(b, '{')
		for k, m := range members[i] {
			if k > 0 {
				b = append(b, ',')
			}
			b = append(b, m.jsonEncoding()...)
		}
		return append(b, '}'), true
	}
}

func newMember(name string, b *model.Bag, addr string) *member {
	return &member{name: name, bag: b, addr: addr, data: withAddress(bagData(b), addr)}
}

// bagData is b's settings as a universe shows them: {} for none, never
// nil.
func bagData(b *model.Bag) map[string]string {
	if data := b.Map(); data != nil {
		return data
	}
	return map[string]string{}
}

// withAddress fills in private-address, as Juju does, unless the unit set
// its own.
func withAddress(data map[string]string, addr string) map[string]string {
	if addr == "" {
		return data
	}
	if _, ok := data["private-address"]; ok {
		return data
	}
	out := maps.Clone(data)
	out["private-address"] = addr
	return out
}

// side is one side of a relation: the units of one service, as the
// universes of the other side (or of its peers) show them.
type side struct {
	// units is the service's unit list (model.State.UnitsOf) the side
	// was made for; the state replaces the list when a unit comes or
	// goes, so a different list means a different side.
	units []*model.Unit
	// byName orders units by name in bytes, the order the hash encodes
	// members in, sorted once instead of in every universe.
	byName []int
	// slots holds each unit's member, made by the first universe that
	// shows it; universes are built on several processors at once.
	// Members and views are held weakly, for as long as something else
	// holds them (the universes of a pass, the views they share), so
	// that the leader's memory at the fixed point does not grow with
	// every member ever shown. A member collected is made again by the
	// next universe that shows it.
	slots []atomic.Pointer[weak.Pointer[member]]
	// shared is the last view made for the other side's units, which
	// all see the same members (side.view).
	shared atomic.Pointer[weak.Pointer[shownSide]]
	// allBut holds, per unit, the set of all the side's units but it:
	// what each of its peers sees when every unit is a member.
	allBut []atomic.Pointer[model.Members]
}

func newSide(units []*model.Unit) *side {
	byName := make([]int, len(units))
	for i := range byName {
		byName[i] = i
	}
	slices.SortFunc(byName, func(a, b int) int { return strings.Compare(units[a].Name, units[b].Name) })
	return &side{units: units, byName: byName, slots: make([]atomic.Pointer[weak.Pointer[member]], len(units)), allBut: make([]atomic.Pointer[model.Members], len(units))}
}

// member returns the i-th unit's member in relation rel, made again if
// its settings or address changed since it was made.
func (sd *side) member(st *model.State, rel, i int) *member {
	u := sd.units[i]
	b, addr := u.Settings.Get(rel), st.Address(u)
	if m := load(&sd.slots[i]); m != nil && m.bag == b && m.addr == addr {
		return m
	}
	m := newMember(u.Name, b, addr)
	store(&sd.slots[i], m)
	return m
}

// shownSide is what one universe shows of a side over a relation: the
// members chosen, in name order (as the hash encodes them), the map the
// universe holds them in, their set as a Seen records it, and the highest
// revision among them (model.SeenRelation.At). Universes that show the
// same members may share it (side.view), read-only like the members
// themselves.
type shownSide struct {
	byName  []*member
	units   map[string]map[string]string
	members model.Members
	at      uint64
}

// view returns the view of rel for viewer, who is shown the units shown
// (which model.State.RemoteMembers or Shown chose from this side's units,
// in their order), their members taken from jn if it is not nil. The
// viewers of the other side all see the same members, and share one view
// while those are the same: a change that touches none of them (a config
// change) makes no map and no member set again. Each peer sees all but
// itself, so its view is its own; it is made per universe and not kept
// (kept, they would be n maps of n-1 members, growing with the square of
// the service), with its member set made once per side (side.allBut). shared false (container
// scope) makes a view for this universe alone.
func (sd *side) shown(st *model.State, rel int, viewer *model.Unit, shown []*model.Unit, jn *joined, shared bool) *shownSide {
	// at holds the members shown by their place on the side; pooled,
	// as a view found again allocates nothing else.
	buf := scratch.Get().(*[]*member)
	at := slices.Grow((*buf)[:0], len(sd.units))[:len(sd.units)]
	defer func() {
		clear(at)
		*buf = at[:0]
		scratch.Put(buf)
	}()
	self := len(sd.units) // the viewer's place on the side, if it is on it
	j := 0
	for _, u := range shown {
		for j < len(sd.units) && sd.units[j] != u {
			if sd.units[j] == viewer {
				self = j
			}
			j++
		}
		if j == len(sd.units) {
			// Not from this side's list: the side is stale, which
			// memberCache.side rules out; made afresh all the same.
			return newShownSide(sortedMembers(st, rel, shown), nil)
		}
		if jn != nil {
			at[j] = jn.at[j]
		} else {
			at[j] = sd.member(st, rel, j)
		}
	}
	if self == len(sd.units) {
		if i := slices.Index(sd.units[j:], viewer); i >= 0 {
			self = j + i
		}
	}
	switch {
	case self < len(sd.units):
		var set *model.Members
		if len(shown) == len(sd.units)-1 {
			// Every unit but the viewer: the usual peer.
			set = sd.allButOne(self)
		}
		return newShownSide(sd.inNameOrder(at, len(shown)), set)
	case !shared:
		return newShownSide(sd.inNameOrder(at, len(shown)), nil)
	}
	if v := load(&sd.shared); v != nil && sd.shows(v.byName, at) {
		return v
	}
	v := newShownSide(sd.inNameOrder(at, len(shown)), nil)
	store(&sd.shared, v)
	return v
}

// joined is one side's members of a relation as the universes built in
// one pass see them (model.State.Joined), each with its member made.
type joined struct {
	units []*model.Unit
	// at holds each joined unit's member by its place on the side.
	at []*member
}

// join returns the side's members of r, svc being the side's service.
func (sd *side) join(st *model.State, r *model.Relation, svc string) *joined {
	jn := &joined{units: st.Joined(r, svc), at: make([]*member, len(sd.units))}
	j := 0
	for _, u := range jn.units {
		// Joined keeps the order of the side's units, the state's list.
		for sd.units[j] != u {
			j++
		}
		jn.at[j] = sd.member(st, r.ID, j)
	}
	return jn
}

// buildCache is what the universes built under one read of the state share:
// each relation side's members, found once. Each of a 100-unit peer
// service's universes asked which of its 99 peers were members (each
// machine looked up) and then looked up each one's address again: two
// fifths of building a change's universes ahead (buildAhead).
type buildCache struct {
	mu     sync.Mutex
	joined map[*side]*joined
	// walks counts the sides' members found (sd.join).
	walks int
}

func newBuildCache() *buildCache { return &buildCache{joined: map[*side]*joined{}} }

// join returns sd's members of r, found once per cache; nil for none (a
// universe built alone asks model.State.RemoteMembers for its own).
func (p *buildCache) join(st *model.State, sd *side, r *model.Relation, svc string) *joined {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	jn := p.joined[sd]
	p.mu.Unlock()
	if jn != nil {
		return jn
	}
	// Two builders may both find the side's members; one set wins.
	jn = sd.join(st, r, svc)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.walks++
	if kept := p.joined[sd]; kept != nil {
		return kept
	}
	p.joined[sd] = jn
	return jn
}

// allButOne returns the set of the side's units but the i-th, made once
// per side: model.NewMembers parses every name, and a peer's universe
// would otherwise parse all of its peers' names each time.
func (sd *side) allButOne(i int) *model.Members {
	if set := sd.allBut[i].Load(); set != nil {
		return set
	}
	names := make([]string, 0, len(sd.units)-1)
	for k, u := range sd.units {
		if k != i {
			names = append(names, u.Name)
		}
	}
	set := model.NewMembers(names)
	sd.allBut[i].Store(&set)
	return &set
}

// load returns what slot holds, nil if nothing or if it was collected.
func load[T any](slot *atomic.Pointer[weak.Pointer[T]]) *T {
	if wp := slot.Load(); wp != nil {
		return wp.Value()
	}
	return nil
}

// store holds v weakly in slot.
func store[T any](slot *atomic.Pointer[weak.Pointer[T]], v *T) {
	wp := weak.Make(v)
	slot.Store(&wp)
}

// scratch pools side.view's working space.
var scratch = sync.Pool{New: func() any { return new([]*member) }}

// inNameOrder returns the n members of at (by place on the side) in name
// order.
func (sd *side) inNameOrder(at []*member, n int) []*member {
	byName := make([]*member, 0, n)
	for _, i := range sd.byName {
		if at[i] != nil {
			byName = append(byName, at[i])
		}
	}
	return byName
}

// shows reports whether byName is the members of at (by place on the
// side) in name order.
func (sd *side) shows(byName, at []*member) bool {
	k := 0
	for _, i := range sd.byName {
		if m := at[i]; m != nil {
			if k == len(byName) || byName[k] != m {
				return false
			}
			k++
		}
	}
	return k == len(byName)
}

// newView makes the view of members, given in name order; set is their
// set if it was made before, nil to make it.
func newShownSide(byName []*member, set *model.Members) *shownSide {
	v := &shownSide{byName: byName, units: make(map[string]map[string]string, len(byName))}
	for _, m := range byName {
		v.units[m.name] = m.data
		if m.bag != nil {
			v.at = max(v.at, m.bag.Rev)
		}
	}
	if set != nil {
		v.members = *set
		return v
	}
	names := make([]string, len(byName))
	for i, m := range byName {
		names[i] = m.name
	}
	v.members = model.NewMembers(names)
	return v
}

// sortedMembers makes the members of units in rel without a side, in
// name order.
func sortedMembers(st *model.State, rel int, units []*model.Unit) []*member {
	ms := make([]*member, len(units))
	for i, u := range units {
		ms[i] = newMember(u.Name, u.Settings.Get(rel), st.Address(u))
	}
	slices.SortFunc(ms, func(a, b *member) int { return strings.Compare(a.name, b.name) })
	return ms
}

// memberCache holds the sides of a state's relations, kept for as long as
// the state lives (membersOf) so that every universe built from it shares
// them: a hand-out's, a view's rebuild, a claim's pick. The state changes
// under it, so each side is checked against the state it is used with
// (side); readers share it under the store's read lock, several at once.
type memberCache struct {
	mu    sync.Mutex
	sides map[sideKey]*side
}

type sideKey struct {
	rel int
	svc string
}

// memberCaches maps each state universes are built from, held weakly, to
// its memberCache; an entry goes when its state is collected. A decoded or
// cloned state is another state and starts with a cache of its own.
var memberCaches sync.Map // weak.Pointer[model.State] -> *memberCache

// membersOf returns st's memberCache, made the first time it is asked
// for. Two first callers may both make one; one wins and both get it.
func membersOf(st *model.State) *memberCache {
	k := weak.Make(st)
	if c, ok := memberCaches.Load(k); ok {
		return c.(*memberCache)
	}
	c, loaded := memberCaches.LoadOrStore(k, &memberCache{sides: map[sideKey]*side{}})
	if !loaded {
		runtime.AddCleanup(st, func(k weak.Pointer[model.State]) { memberCaches.Delete(k) }, k)
	}
	return c.(*memberCache)
}

// side returns the side of relation rel made of service svc's units.
func (c *memberCache) side(st *model.State, rel int, svc string) *side {
	units := st.UnitsOf(svc)
	k := sideKey{rel, svc}
	c.mu.Lock()
	defer c.mu.Unlock()
	if sd := c.sides[k]; sd != nil && sameList(sd.units, units) {
		return sd
	}
	if len(c.sides) >= 4*len(st.Relations)+16 {
		// Sides of relations and services long gone: a relation has
		// two sides, so this bounds the memo by the relations there
		// are, and the ones still in use are made again once.
		clear(c.sides)
	}
	sd := newSide(units)
	c.sides[k] = sd
	return sd
}

// sameList reports whether a and b are the same list: the state never
// changes a unit list in place, and the side keeps its list alive, so
// its array cannot be reused for another.
func sameList(a, b []*model.Unit) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
