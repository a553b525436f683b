package events

import (
	"slices"
	"sort"

	"github.com/fixpoint/fixpoint/charmapi"
)

// Hook names that do not depend on a relation.
const (
	Install               = "install"
	Start                 = "start"
	Stop                  = "stop"
	Remove                = "remove"
	ConfigChanged         = "config-changed"
	UpgradeCharm          = "upgrade-charm"
	LeaderElected         = "leader-elected"
	LeaderSettingsChanged = "leader-settings-changed"
	// UpdateStatus is never derived from a change: Juju fires it on a
	// timer, and so does the engine (engine/schedule.UpdateStatusDue).
	UpdateStatus = "update-status"
)

// Relation hook kinds; the hook name is "<endpoint>-relation-<kind>".
const (
	Created  = "created"
	Joined   = "joined"
	Changed  = "changed"
	Departed = "departed"
	Broken   = "broken"
)

// RelationHook returns the hook name for a relation event,
// e.g. RelationHook("db", Joined) = "db-relation-joined".
func RelationHook(endpoint, kind string) string { return endpoint + "-relation-" + kind }

// Derive returns the events that lead from before to after, in Juju's
// order. A nil before means the unit never reconciled; a nil after yields
// nothing.
//
// The order follows Juju's uniter resolver (worker/uniter/resolver.go and
// worker/uniter/relation/resolver.go, see research/juju.md §1.1 and §2):
//
//   - a unit that was never installed gets install, relation-created for
//     every relation it is in, leader-elected (leader) or
//     leader-settings-changed (follower), config-changed and start;
//   - otherwise relation-created for new relations comes first (Juju's
//     created-relations resolver runs before the leadership one), then
//     leader-elected when leadership was gained or leader-settings-changed
//     for a follower whose leader data moved or who lost leadership, then
//     upgrade-charm followed by config-changed when the charm changed
//     (Juju queues config-changed after upgrade-charm), or config-changed
//     alone when the config or the unit's own address moved;
//   - then, per relation in id order: departed for each member that is
//     gone, changed with no remote unit when the remote app bag moved,
//     joined immediately followed by changed for each new member (sorted),
//     changed for each member whose token differs;
//   - a relation that is gone or dying gets departed for each member it
//     still had, then broken (never for a peer relation);
//   - a unit whose machine rebooted (juju-reboot) first gets stop, then
//     start;
//   - a dying unit gets only its teardown: every relation broken that way,
//     then stop and remove.
func Derive(before, after *Snapshot) []charmapi.Event {
	if after == nil {
		return nil
	}
	if before == nil {
		before = &Snapshot{}
	}
	d := &deriver{before: before, after: after}
	switch {
	case after.dying():
		d.teardown()
	case !before.Installed:
		d.firstRun()
	default:
		d.steady()
	}
	return d.out
}

// deriver accumulates events for one Derive call.
type deriver struct {
	before, after *Snapshot
	out           []charmapi.Event
}

func (d *deriver) emit(hook string) { d.out = append(d.out, charmapi.Event{Hook: hook}) }

func (d *deriver) emitRel(r *RelSnap, kind, unit, departing string) {
	d.emitNamed(r, RelationHook(r.Endpoint, kind), r.Ident(), unit, departing)
}

// emitNamed is emitRel with the hook's name and the relation's ident
// made by the caller: a relation's members share them.
func (d *deriver) emitNamed(r *RelSnap, hook, ident, unit, departing string) {
	d.out = append(d.out, charmapi.Event{Hook: hook, Relation: ident, RemoteUnit: unit, RemoteApp: r.RemoteApp, Departing: departing})
}

// firstRun is the setup sequence of a unit that never reconciled. Juju's
// documented order (docs/reference/hook.md): install, relation-created for
// relations that already exist (peers always do), leader-elected or
// leader-settings-changed, config-changed, start; the relation resolver
// then joins the members.
func (d *deriver) firstRun() {
	// Juju's storage resolver attaches the storage a unit is created with
	// before its install hook (docs/reference/hook.md: "storage-attached
	// ... before the install hook").
	d.attached(nil)
	d.emit(Install)
	for _, r := range d.after.relationsByID() {
		if r.Alive {
			d.emitRel(r, Created, "", "")
		}
	}
	// A follower's local leader-settings version starts at zero, so Juju
	// always runs leader-settings-changed on it once after install
	// (worker/uniter/leadership/resolver.go).
	if d.after.Leader {
		d.emit(LeaderElected)
	} else {
		d.emit(LeaderSettingsChanged)
	}
	d.emit(ConfigChanged)
	d.emit(Start)
	for _, r := range d.after.relationsByID() {
		if r.Alive {
			d.relation(nil, r)
		}
	}
}

// steady is the diff of an installed, alive unit.
func (d *deriver) steady() {
	b, a := d.before, d.after
	if a.Boot != b.Boot {
		// Its machine rebooted (juju-reboot): the unit's lifecycle
		// restarts before anything else it has to catch up on, as a
		// unit agent starting after a reboot runs start first.
		d.emit(Stop)
		d.emit(Start)
	}
	// Storage added since (storage-add, a higher count, an upgrade that
	// declares a new store) attaches first: Juju's uniter asks its
	// storage resolver before the others.
	d.attached(b.Storage)
	for _, r := range a.relationsByID() {
		if r.Alive && b.Relations[r.Ident()] == nil {
			d.emitRel(r, Created, "", "")
		}
	}
	switch {
	case a.Leader && !b.Leader:
		d.emit(LeaderElected)
	case !a.Leader && (b.Leader || a.LeaderData != b.LeaderData):
		// A unit that lost leadership becomes a follower that has not
		// seen the leader's settings yet (research/juju.md §5: followers
		// are told "when leadership changes or leader settings change").
		d.emit(LeaderSettingsChanged)
	}
	switch {
	case a.Charm != b.Charm || a.Resources != b.Resources:
		// Juju's uniter runs upgrade-charm when a resource of the
		// service changes too (the charm's modified version moves).
		d.emit(UpgradeCharm)
		d.emit(ConfigChanged)
	case a.Config != b.Config || a.Address != b.Address && b.Address != "":
		// Juju's resolver also runs config-changed when the unit's
		// addresses move (remote state's AddressesHash, next to
		// ConfigHash and TrustHash). An address never recorded is not
		// a move.
		d.emit(ConfigChanged)
	}
	for _, ident := range d.relationIdents() {
		br, ar := b.Relations[ident], a.Relations[ident]
		if ar == nil || !ar.Alive {
			if br != nil {
				d.breakRelation(br, "")
			}
			continue
		}
		d.relation(br, ar)
	}
}

// teardown is what a dying unit runs: Juju's resolver handles relations
// first when the unit is dying, then runs stop (worker/uniter/resolver.go,
// nextOp, case Dying), and the unit is removed after. A unit that was
// never installed runs nothing: Juju skips a queued install for a dying
// unit and never started it.
func (d *deriver) teardown() {
	if !d.before.Installed {
		return
	}
	for _, r := range d.before.relationsByID() {
		// The resolver names the local unit as the departing one when the
		// local unit is what is going away (relation/resolver.go).
		d.breakRelation(r, d.after.Unit)
	}
	// The storage the unit had attached detaches before stop, as Juju's
	// storage resolver runs storage-detaching for a dying unit's
	// attachments before the uniter stops it.
	for _, id := range d.before.Storage {
		d.emitStorage(id, StorageDetaching)
	}
	d.emit(Stop)
	d.emit(Remove)
}

// breakRelation departs every member the unit still knew, sorted, then
// breaks the relation. departing overrides JUJU_DEPARTING_UNIT; "" names
// each remote unit.
func (d *deriver) breakRelation(r *RelSnap, departing string) {
	for _, u := range sortedUnits(r.Members) {
		dep := departing
		if dep == "" {
			dep = u
		}
		d.emitRel(r, Departed, u, dep)
	}
	// relation-broken "never fires for peer relations"
	// (juju/juju:docs/reference/hook.md; relation/resolver.go skips it
	// with "Since you cannot depart peer relations we can safely ignore
	// this hook"), see research/juju.md §1.1.
	if !r.Peer {
		d.emitRel(r, Broken, "", "")
	}
}

// relation emits the events of one live relation, in the priority of
// Juju's relation resolver (nextHookForRelation): departed, app-bag
// changed, joined+changed for new members, changed for moved members.
// before is nil for a relation the unit never saw.
func (d *deriver) relation(before, after *RelSnap) {
	if before == after {
		// One snapshot on both sides (DeriveSeen shares a relation both
		// Seens saw alike): nothing in it moved.
		return
	}
	var known map[string]string
	var app string
	if before != nil {
		known, app = before.Members, before.App
	}
	// Only the units that get an event are sorted: at a hand-out most
	// members moved not at all, and sorting them all was most of the cost.
	var gone []string
	for u := range known {
		if _, ok := after.Members[u]; !ok {
			gone = append(gone, u)
		}
	}
	charmapi.SortUnits(gone)
	ident := after.Ident()
	if len(gone) > 0 {
		departed := RelationHook(after.Endpoint, Departed)
		for _, u := range gone {
			d.emitNamed(after, departed, ident, u, u)
		}
	}
	// A unit is never woken by its own writes: the leader's writes to its
	// own service's bag over a peer relation fire nothing on it
	// (juju/juju PR #22525, research/juju.md §1.1).
	ownWrite := after.Peer && d.before.Leader && d.after.Leader
	if after.App != app && !ownWrite {
		d.emitRel(after, Changed, "", "")
	}
	// At least this many joined (all of them on a first run).
	joined := make([]string, 0, max(len(after.Members)-len(known), 0))
	var moved []string
	for u, tok := range after.Members {
		if old, ok := known[u]; !ok {
			joined = append(joined, u)
		} else if old != tok {
			moved = append(moved, u)
		}
	}
	charmapi.SortUnits(joined)
	if len(joined)+len(moved) == 0 {
		return
	}
	// Room for them all at once: a first run's relation with many
	// members emits two events each.
	d.out = slices.Grow(d.out, 2*len(joined)+len(moved))
	changed := RelationHook(after.Endpoint, Changed)
	if len(joined) > 0 {
		joinedHook := RelationHook(after.Endpoint, Joined)
		for _, u := range joined {
			// Juju's ChangedPending: joined is always followed
			// directly by changed for the same unit in that relation.
			d.emitNamed(after, joinedHook, ident, u, "")
			d.emitNamed(after, changed, ident, u, "")
		}
	}
	charmapi.SortUnits(moved)
	for _, u := range moved {
		d.emitNamed(after, changed, ident, u, "")
	}
}

// relationIdents lists the idents of both snapshots, by relation id.
func (d *deriver) relationIdents() []string {
	ids := map[string]int{}
	for k, r := range d.before.Relations {
		ids[k] = r.ID
	}
	for k, r := range d.after.Relations {
		ids[k] = r.ID
	}
	out := make([]string, 0, len(ids))
	for k := range ids {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if ids[out[i]] != ids[out[j]] {
			return ids[out[i]] < ids[out[j]]
		}
		return out[i] < out[j]
	})
	return out
}
