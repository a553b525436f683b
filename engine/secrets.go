package engine

import (
	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// withSecrets adds to uni, and to its Seen, the Juju secrets u may read,
// their contents opened with the state's cluster key. A revision the key
// does not open is left without content: the hook's secret-get says so.
func withSecrets(st *model.State, u *model.Unit, uni *charmapi.Universe, seen *model.Seen) {
	if len(st.Secrets) == 0 {
		return
	}
	for _, s := range st.VisibleSecrets(u.Name, u.Service) {
		owner := s.Owns(u.Name, u.Service)
		cs := charmapi.Secret{ID: s.URI(), Latest: s.Latest(), Revision: s.Latest()}
		// Only the leader manages an application's secret: it alone gets
		// its owner hooks (secret-remove).
		ss := model.SeenSecret{Latest: s.Latest(), Owner: owner && (s.OwnerKind == model.SecretOwnerUnit || uni.Leader)}
		if owner {
			cs.Owner, cs.Label, cs.Description, cs.Rotate = s.OwnerKind, s.Label, s.Description, s.Rotate
			cs.Expire = model.SecretTime(s.LatestExpire())
			for _, r := range s.Revisions {
				cs.Revisions = append(cs.Revisions, r.Rev)
			}
			cs.Obsolete = s.Obsolete()
			if ss.Owner {
				ss.Obsolete = cs.Obsolete
				withSchedule(s, &cs, &ss)
			}
		} else {
			c := s.Consumers[u.Name]
			cs.Label, cs.Revision = c.Label, c.Tracked
			ss.Tracked = c.Tracked
		}
		if cs.Revision != 0 {
			cs.Content, _ = st.OpenRevision(s, cs.Revision)
		}
		if cs.Revision != cs.Latest {
			cs.LatestContent, _ = st.OpenRevision(s, cs.Latest)
		}
		if cs.Content == nil {
			cs.Content = map[string]string{}
		}
		uni.Secrets = append(uni.Secrets, cs)
		if seen.Secrets == nil {
			seen.Secrets = map[string]model.SeenSecret{}
		}
		seen.Secrets[s.ID] = ss
	}
}

// withSchedule adds s's schedule to the managing owner's view of it: the
// leader's alone for an application's secret, so that an occurrence
// wakes no other unit.
func withSchedule(s *model.Secret, cs *charmapi.Secret, ss *model.SeenSecret) {
	cs.NextRotate, cs.RotateDue = model.SecretTime(s.NextRotate), s.RotateDue
	for _, r := range s.Revisions {
		if r.ExpireDue > 0 {
			cs.Expired = append(cs.Expired, r.Rev)
			cs.ExpireDue += r.ExpireDue
		}
	}
	ss.RotateDue, ss.Expired = s.RotateDue, s.Expired()
}
