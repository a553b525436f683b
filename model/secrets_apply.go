package model

import (
	"fmt"
	"maps"
	"slices"
)

// Secret changes a hook's result carries (Result.Secrets).
const (
	SecretOpAdd    = "add"
	SecretOpSet    = "set"
	SecretOpRemove = "remove"
	SecretOpGrant  = "grant"
	SecretOpRevoke = "revoke"
	// SecretOpTrack is a consumer's read: the revision it now tracks and
	// the label it gave the secret.
	SecretOpTrack = "track"
)

// SecretChange is one change a unit's hook made to a secret. Content is
// the plaintext between the result's decoding and sealing on the node
// that proposes it; it is never encoded, and a change whose content is
// not sealed is refused (check), so plaintext never reaches the log.
type SecretChange struct {
	Op          string  `json:"op"`
	ID          string  `json:"id"`
	Owner       string  `json:"owner,omitempty"`
	Label       *string `json:"label,omitempty"`
	Description *string `json:"description,omitempty"`
	// Expire is when the new revision expires (unix nanoseconds); 0
	// clears it.
	Expire  *int64            `json:"expire,omitempty"`
	Rotate  *string           `json:"rotate,omitempty"`
	Sealed  string            `json:"sealed,omitempty"`
	Content map[string]string `json:"-"`
	// Revision is, for remove, the one revision removed (0: the whole
	// secret) and, for track, the revision now tracked.
	Revision int `json:"revision,omitempty"`
	// Grantee is the service or unit granted or revoked, over Relation.
	Grantee  string `json:"grantee,omitempty"`
	Relation int    `json:"relation,omitempty"`
}

// check is the state-free check of one change; sealed says its content
// must be sealed already, as in a command.
func (c *SecretChange) check(sealed bool) error {
	if err := CheckSecretID(c.ID); err != nil {
		return fmt.Errorf("secret %s: %w", Quote(c.ID, 24), err)
	}
	where := "secret:" + c.ID
	switch c.Op {
	case SecretOpAdd, SecretOpSet:
		if c.Op == SecretOpAdd && c.Owner != SecretOwnerUnit && c.Owner != SecretOwnerApp {
			return fmt.Errorf("%s: owner must be %q or %q", where, SecretOwnerUnit, SecretOwnerApp)
		}
		if c.Op == SecretOpAdd && c.Sealed == "" && c.Content == nil {
			return fmt.Errorf("%s: a new secret needs content", where)
		}
	case SecretOpRemove, SecretOpTrack:
		if c.Revision < 0 {
			return fmt.Errorf("%s: revision %d", where, c.Revision)
		}
	case SecretOpGrant, SecretOpRevoke:
		if c.Relation < 0 {
			return fmt.Errorf("%s: relation %d", where, c.Relation)
		}
		if err := checkGrantee(c.Grantee); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	default:
		return fmt.Errorf("%s: unknown change %s", where, Quote(c.Op, 16))
	}
	if c.Content != nil {
		if err := CheckSecretContent(c.Content); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	}
	if sealed && c.Content != nil && c.Sealed == "" {
		return fmt.Errorf("%s: content is not sealed: it must be sealed under the cluster key before it is proposed", where)
	}
	if len(c.Sealed) > maxSealed {
		return fmt.Errorf("%s: sealed content of %d bytes; the limit is %d", where, len(c.Sealed), maxSealed)
	}
	if c.Label != nil {
		if err := CheckSecretLabel("label", *c.Label, MaxSecretLabel); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	}
	if c.Description != nil {
		if err := CheckSecretLabel("description", *c.Description, MaxSecretDescription); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	}
	if c.Rotate != nil {
		if err := CheckRotatePolicy(*c.Rotate); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	}
	return nil
}

func checkGrantee(who string) error {
	if CheckUnitName(who) == nil || CheckName(KindService, who) == nil {
		return nil
	}
	return fmt.Errorf("grantee %s is neither a service nor a unit", Quote(who, 32))
}

// CheckSecretChanges checks a result's secret changes before their
// contents are sealed: what a hook's result decoder runs.
func CheckSecretChanges(cs []SecretChange) error { return checkSecrets(cs, false) }

// checkSecrets checks a result's secret changes without the state.
func checkSecrets(cs []SecretChange, sealed bool) error {
	if len(cs) > MaxSecretChanges {
		return fmt.Errorf("%d secret changes; the limit is %d", len(cs), MaxSecretChanges)
	}
	for i := range cs {
		if err := cs[i].check(sealed); err != nil {
			return fmt.Errorf("secrets.%d: %w", i, err)
		}
	}
	return nil
}

// applySecrets applies a successful result's secret changes, each alone:
// one refused is skipped with its reason (never a value) and the others
// apply. audience collects the units and services whose universes moved.
func (st *applying) applySecrets(index uint64, u *Unit, leader bool, cs []SecretChange, audience map[string]bool) []string {
	var skipped []string
	for i := range cs {
		c := &cs[i]
		before := st.Secrets[c.ID]
		if before != nil {
			for _, who := range secretAudience(before) {
				audience[who] = true
			}
		}
		after, err := st.secretChange(index, u, leader, c, before)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("secret:%s %s: %v", c.ID, c.Op, err))
			continue
		}
		if after == nil {
			st.dropSecret(c.ID)
			continue
		}
		after.Index = index
		st.putSecret(c.ID, after)
		for _, who := range secretAudience(after) {
			audience[who] = true
		}
	}
	return skipped
}

// secretChange returns the secret as c leaves it (nil: removed), or why c
// is refused. before is never edited.
func (st *applying) secretChange(index uint64, u *Unit, leader bool, c *SecretChange, before *Secret) (*Secret, error) {
	if c.Op == SecretOpAdd {
		if before != nil {
			return nil, fmt.Errorf("a secret with that id exists")
		}
		owner := u.Name
		if c.Owner == SecretOwnerApp {
			if !leader {
				return nil, fmt.Errorf("only the leader adds a secret its application owns")
			}
			owner = u.Service
		}
		if n := st.ownedCount(c.Owner, owner); n >= MaxSecretsPerOwner {
			return nil, fmt.Errorf("%s owns %d secrets; the limit is %d", owner, n, MaxSecretsPerOwner)
		}
		s := &Secret{ID: c.ID, OwnerKind: c.Owner, Owner: owner, Created: index}
		st.stamp(s, true)
		return s, st.ownerEdit(s, c, index)
	}
	if before == nil {
		return nil, fmt.Errorf("no such secret")
	}
	s := before.copy()
	if c.Op == SecretOpTrack {
		if !st.SecretSees(before, u.Name, u.Service) || before.Owns(u.Name, u.Service) {
			return nil, fmt.Errorf("%s is not a consumer of it", u.Name)
		}
		cons := s.Consumers[u.Name]
		if c.Revision > 0 {
			if before.Revision(c.Revision) == nil {
				return nil, fmt.Errorf("revision %d does not exist", c.Revision)
			}
			cons.Tracked = c.Revision
		}
		if c.Label != nil {
			if other := st.consumerLabel(u.Name, *c.Label); other != "" && other != c.ID {
				return nil, fmt.Errorf("label %s is already used by %s for secret:%s", Quote(*c.Label, 32), u.Name, other)
			}
			cons.Label = *c.Label
		}
		s.Consumers = withEntry(s.Consumers, u.Name, cons)
		return s, nil
	}
	switch {
	case before.OwnerKind == SecretOwnerUnit && before.Owner == u.Name:
	case before.OwnerKind == SecretOwnerApp && before.Owner == u.Service:
		if !leader {
			return nil, fmt.Errorf("%s is not the leader of %s, which owns the secret", u.Name, u.Service)
		}
	default:
		return nil, fmt.Errorf("%s does not own it", u.Name)
	}
	switch c.Op {
	case SecretOpSet:
		st.stamp(s, false)
		return s, st.ownerEdit(s, c, index)
	case SecretOpRemove:
		if c.Revision == 0 {
			return nil, nil
		}
		i := slices.IndexFunc(s.Revisions, func(r SecretRevision) bool { return r.Rev == c.Revision })
		if i < 0 {
			return nil, fmt.Errorf("revision %d does not exist", c.Revision)
		}
		s.Revisions = slices.Delete(s.Revisions, i, i+1)
		if len(s.Revisions) == 0 {
			return nil, nil
		}
		st.stamp(s, false)
		return s, nil
	case SecretOpGrant:
		r := st.Relations[c.Relation]
		if r == nil || r.Life != Alive || !st.IsMember(u, r) {
			return nil, fmt.Errorf("relation %d is not one of %s's", c.Relation, u.Name)
		}
		remote, _ := r.Remote(u.Service)
		if c.Grantee != remote.Service && ServiceOf(c.Grantee) != remote.Service {
			return nil, fmt.Errorf("%s is not on the other side of relation %d", c.Grantee, c.Relation)
		}
		s.Grants = withEntry(s.Grants, c.Grantee, SecretGrant{Relation: c.Relation})
	case SecretOpRevoke:
		s.Grants = withoutEntry(s.Grants, c.Grantee)
		// A revoked unit, or every unit of a revoked service, stops
		// consuming.
		for who := range s.Consumers {
			if who == c.Grantee || ServiceOf(who) == c.Grantee {
				if !st.SecretSees(s, who, ServiceOf(who)) {
					s.Consumers = withoutEntry(s.Consumers, who)
				}
			}
		}
	}
	return s, nil
}

// ownerEdit applies an owner's add or set to s, a fresh copy.
func (st *applying) ownerEdit(s *Secret, c *SecretChange, index uint64) error {
	if c.Label != nil && *c.Label != s.Label {
		if other := st.ownerLabel(s.OwnerKind, s.Owner, *c.Label); other != "" && other != s.ID {
			return fmt.Errorf("label %s is already used by %s for secret:%s", Quote(*c.Label, 32), s.Owner, other)
		}
		s.Label = *c.Label
	}
	if c.Description != nil {
		s.Description = *c.Description
	}
	if c.Sealed != "" {
		if len(s.Revisions) >= MaxSecretRevisions {
			return fmt.Errorf("%d revisions kept; remove old ones (secret-remove --revision) before adding more", len(s.Revisions))
		}
		s.Revisions = append(s.Revisions, st.newRevision(s.Latest()+1, c.Sealed, index))
	}
	scheduleEdit(s, c, st.now, c.Sealed != "")
	return nil
}

// copy returns s with its own slices and maps' headers, for an edit.
func (s *Secret) copy() *Secret {
	c := *s
	c.Revisions = slices.Clone(s.Revisions)
	c.Grants = maps.Clone(s.Grants)
	c.Consumers = maps.Clone(s.Consumers)
	return &c
}

func (st *State) ownedCount(kind, owner string) int {
	n := 0
	for _, s := range st.Secrets {
		if s.OwnerKind == kind && s.Owner == owner {
			n++
		}
	}
	return n
}

// ownerLabel is the id of the secret owner labels label, or "".
func (st *State) ownerLabel(kind, owner, label string) string {
	for id, s := range st.Secrets {
		if s.OwnerKind == kind && s.Owner == owner && s.Label == label {
			return id
		}
	}
	return ""
}

// consumerLabel is the id of the secret unit labels label, or "".
func (st *State) consumerLabel(unit, label string) string {
	for id, s := range st.Secrets {
		if c, ok := s.Consumers[unit]; ok && c.Label == label {
			return id
		}
	}
	return ""
}

// dropSecretsOf removes what a removed unit held of secrets: the secrets
// it owned, its grants and its consumer records; a removed service's
// own secrets go with its last unit. A removal's journal entry moves
// every universe (Touched.All), so the audience is not collected.
func (st *State) dropSecretsOf(u *Unit) {
	lastOfService := len(st.UnitsOf(u.Service)) == 0
	for _, id := range sortedKeys(st.Secrets) {
		s := st.Secrets[id]
		switch {
		case s.OwnerKind == SecretOwnerUnit && s.Owner == u.Name,
			s.OwnerKind == SecretOwnerApp && s.Owner == u.Service && lastOfService:
			st.dropSecret(id)
			continue
		}
		_, granted := s.Grants[u.Name]
		_, consumer := s.Consumers[u.Name]
		if !granted && !consumer {
			continue
		}
		c := s.copy()
		c.Grants = withoutEntry(c.Grants, u.Name)
		c.Consumers = withoutEntry(c.Consumers, u.Name)
		st.putSecret(id, c)
	}
}

// secretsTimed reports whether commands of op make or change secrets,
// and so may record their times (Command.SecretTimes).
func secretsTimed(op Op) bool { return op == OpDeploy || op == OpResults || op == OpFinish }

// ChangesSecrets reports whether c may make or change secrets: a hook's
// or an operation's result with secret changes, or a deploy that
// declares user secrets. The proposer asks such a command to record
// their times (Command.SecretTimes) once the cluster's level allows.
func (c *Command) ChangesSecrets() bool {
	switch {
	case c.Deploy != nil:
		return len(c.Deploy.Env.Secrets) > 0
	case c.Finish != nil:
		return c.Finish.Writes != nil && len(c.Finish.Writes.Secrets) > 0
	}
	for i := range c.Results {
		if len(c.Results[i].Secrets) > 0 {
			return true
		}
	}
	return false
}

// stamp records the command's time on s as its owner's latest change,
// and as its making when made; nothing when the command records no
// times.
func (st *applying) stamp(s *Secret, made bool) {
	if st.secretTime == 0 {
		return
	}
	if made {
		s.CreatedAt = st.secretTime
	}
	s.UpdatedAt = st.secretTime
}

// newRevision is revision rev of sealed content made at index, with the
// command's time when it records one.
func (st *applying) newRevision(rev int, sealed string, index uint64) SecretRevision {
	return SecretRevision{Rev: rev, Sealed: sealed, Index: index, CreatedAt: st.secretTime}
}
