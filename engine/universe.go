package engine

import (
	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// Build returns the universe unit sees in st (without events and attempt)
// and the Seen record a successful reconcile of it would leave behind.
// It returns nil when the unit does not exist.
//
// The universe shares its maps with the state and with the other
// universes built from it (each member's settings are made once and
// shared while universes hold them, memberCache): it is read-only, as
// all of a universe's readers treat it.
func Build(st *model.State, unit string) (*charmapi.Universe, *model.Seen) {
	uni, seen, _ := build(st, unit, nil)
	return uni, seen
}

// buildHashed is Build with the universe's hash and the number of bytes
// hashed (hashCounted), its members taken in the order build found them
// in rather than sorted again.
func buildHashed(st *model.State, unit string) (*charmapi.Universe, *model.Seen, string, int) {
	uni, seen, members := build(st, unit, nil)
	if uni == nil {
		return nil, nil, "", 0
	}
	h, n := hashWith(uni, members)
	return uni, seen, h, n
}

// build is Build that also returns the members of each of the universe's
// relations, in the order the hash encodes them (hashWith). The universes
// built with one buildCache (nil for one built alone) share what they have in
// common; the state must not move while they are built.
func build(st *model.State, unit string, p *buildCache) (*charmapi.Universe, *model.Seen, [][]*member) {
	u, ok := st.Units[unit]
	if !ok {
		return nil, nil, nil
	}
	svc := st.Services[u.Service]
	leader := svc.Leader == u.Name
	life := string(u.Life)
	uni := &charmapi.Universe{
		API:        charmapi.API,
		Unit:       u.Name,
		Service:    u.Service,
		Charm:      svc.Charm,
		Life:       life,
		Leader:     leader,
		Machine:    u.Machine,
		MachineID:  st.MachineID(u),
		Boot:       st.MachineBoots(u),
		Address:    st.Address(u),
		Config:     svc.Config,
		Resources:  svc.Resources,
		LeaderData: bagData(svc.LeaderData),
		State:      u.State,
		Relations:  []charmapi.Relation{},
	}
	if uni.Config == nil {
		uni.Config = map[string]any{}
	}
	if uni.State == nil {
		// {} as documented, so that a hook on its first run can index it.
		uni.State = map[string]string{}
	}
	seen := &model.Seen{
		Life:      u.Life,
		Charm:     svc.Charm,
		ConfigRev: svc.ConfigRev,
		Leader:    leader,
		Address:   uni.Address,
		Resources: model.ResourcesToken(svc.Resources),
		Boot:      uni.Boot,
	}
	if !leader && svc.LeaderData != nil {
		seen.LeaderRev = svc.LeaderData.Rev
	}
	uni.Storage, seen.Storage = storageOf(u)
	withSecrets(st, u, uni, seen)
	if c := st.TrustedCredential(u); c != nil {
		uni.Credential = &charmapi.Credential{Type: c.Type, Name: c.Name, Region: c.Region, Endpoint: c.Endpoint, AuthType: c.AuthType}
		if c.SecretID != "" {
			uni.Credential.Secret = "secret:" + c.SecretID
		}
	}
	if u.Life != model.Alive {
		// A dying unit's last reconcile sees no relations: each is broken.
		uni.Leaving = st.LeavingSettings(u, model.SeenRelations{}, uni.Address)
		return uni, seen, nil
	}
	var members [][]*member
	for _, r := range st.RelationsOf(u.Service) {
		if !st.IsMember(u, r) {
			continue
		}
		local, _ := r.Endpoint(u.Service)
		remote, _ := r.Remote(u.Service)
		rel := charmapi.Relation{
			Ident:         r.Ident(u.Service),
			ID:            r.ID,
			Name:          local.Name,
			Interface:     r.Interface,
			Role:          string(local.Role),
			Scope:         string(r.Scope),
			RemoteService: remote.Service,
			Local:         withAddress(bagData(u.Settings.Get(r.ID)), uni.Address),
			App:           bagData(r.App[u.Service]),
			RemoteApp:     map[string]string{}, // a peer has no remote service
		}
		sr := &model.SeenRelation{Endpoint: local.Name}
		if local.Role != model.Peer {
			rel.RemoteApp = bagData(r.App[remote.Service])
			if b := r.App[remote.Service]; b != nil {
				sr.App = b.Rev
			}
		} else if !leader {
			// Peers read their own service's bag; only its writer, the
			// leader, must not be woken by it.
			if b := r.App[u.Service]; b != nil {
				sr.App = b.Rev
			}
		}
		sd := membersOf(st).side(st, r.ID, remote.Service)
		jn := p.join(st, sd, r, remote.Service)
		var shown []*model.Unit
		if jn != nil {
			shown = st.Shown(u, r, jn.units)
		} else {
			shown = st.RemoteMembers(u, r)
		}
		// Container scope shows each unit its own few: no view to share.
		v := sd.shown(st, r.ID, u, shown, jn, r.Scope != model.Container)
		rel.Units = v.units
		// The highest revision seen marks what this universe holds
		// (model.SeenRelation.At).
		sr.At = v.at
		sr.Members = v.members
		members = append(members, v.byName)
		uni.Relations = append(uni.Relations, rel)
		seen.Relations.Set(r.ID, *sr)
	}
	uni.Leaving = st.LeavingSettings(u, seen.Relations, uni.Address)
	return uni, seen, members
}
