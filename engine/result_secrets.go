package engine

import (
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// decodeSecrets checks a result's secret changes against the universe the
// hook was given and translates them for the state: ids without their
// "secret:", relation idents to ids, grantees named. Contents stay
// plaintext until the proposing node seals them (model.SealResults).
// Errors name the change and never a value.
func decodeSecrets(uni *charmapi.Universe, in []charmapi.SecretChange) ([]model.SecretChange, error) {
	if len(in) > model.MaxSecretChanges {
		return nil, badResult("secrets: %d changes; the limit is %d", len(in), model.MaxSecretChanges)
	}
	known := map[string]*charmapi.Secret{}
	for i := range uni.Secrets {
		known[uni.Secrets[i].ID] = &uni.Secrets[i]
	}
	out := make([]model.SecretChange, 0, len(in))
	for i, c := range in {
		switch c.Op {
		case model.SecretOpAdd, model.SecretOpSet, model.SecretOpRemove, model.SecretOpGrant, model.SecretOpRevoke, model.SecretOpTrack:
		default:
			return nil, badResult("secrets.%d.op: op must be \"add\", \"set\", \"remove\", \"grant\", \"revoke\" or \"track\"", i)
		}
		id, err := model.ParseSecretURI(c.ID)
		if err != nil {
			return nil, badResult("secrets.%d.id: %v", i, err)
		}
		uri := "secret:" + id
		mc := model.SecretChange{Op: c.Op, ID: id, Owner: c.Owner, Label: c.Label, Description: c.Description, Rotate: c.Rotate, Revision: c.Revision}
		if c.Content != nil {
			mc.Content = c.Content
		}
		if c.Expire != nil {
			var at int64
			if *c.Expire != "" {
				t, err := time.Parse(time.RFC3339, *c.Expire)
				if err != nil {
					return nil, badResult("secrets.%d.expire: %q is not an RFC 3339 time", i, *c.Expire)
				}
				at = t.UnixNano()
			}
			mc.Expire = &at
		}
		s := known[uri]
		switch c.Op {
		case model.SecretOpAdd:
			if s != nil {
				return nil, badResult("secrets.%d: %s exists already; make a new id for a new secret", i, uri)
			}
			if c.Owner == model.SecretOwnerApp && !uni.Leader {
				return nil, badResult("secrets.%d: %s is not the leader of %s; only the leader adds a secret its application owns (or use owner \"unit\")", i, uni.Unit, uni.Service)
			}
			// Later changes of this result may manage it.
			known[uri] = &charmapi.Secret{ID: uri, Owner: c.Owner, Latest: 1}
		case model.SecretOpTrack:
			if s == nil || s.Owner != "" {
				return nil, badResult("secrets.%d: %s has not been granted %s", i, uni.Unit, uri)
			}
			if c.Revision > s.Latest {
				return nil, badResult("secrets.%d.revision: %s has no revision %d", i, uri, c.Revision)
			}
		default:
			switch {
			case s == nil || s.Owner == "":
				return nil, badResult("secrets.%d: %s does not own %s", i, uni.Unit, uri)
			case s.Owner == model.SecretOwnerApp && !uni.Leader:
				return nil, badResult("secrets.%d: %s is owned by %s and only its leader manages it", i, uri, uni.Service)
			}
		}
		if c.Op == model.SecretOpRevoke && c.Relation == "" {
			mc.Grantee, mc.Relation = c.App, 0
			if c.Unit != "" {
				mc.Grantee = c.Unit
			}
		} else if c.Op == model.SecretOpGrant || c.Op == model.SecretOpRevoke {
			rel := relationByIdent(uni, c.Relation)
			if rel == nil {
				return nil, badResult("secrets.%d.relation: %s is not in relation %q", i, uni.Unit, c.Relation)
			}
			mc.Relation, mc.Grantee = rel.ID, rel.RemoteService
			if c.Unit != "" {
				if model.ServiceOf(c.Unit) != rel.RemoteService {
					return nil, badResult("secrets.%d.unit: %s is not a unit of %s, on the other side of %s", i, c.Unit, rel.RemoteService, c.Relation)
				}
				mc.Grantee = c.Unit
			}
		}
		out = append(out, mc)
	}
	if err := model.CheckSecretChanges(out); err != nil {
		return nil, badResult("%v", err)
	}
	return out, nil
}

// withoutSecretValues is res with every secret content replaced by its
// keys, for the output digest: the digest enters the log, and a hash of
// a short password is a guess away from it.
func withoutSecretValues(res *charmapi.Result) *charmapi.Result {
	if len(res.Secrets) == 0 {
		return res
	}
	cp := *res
	cp.Secrets = make([]charmapi.SecretChange, len(res.Secrets))
	for i, c := range res.Secrets {
		if c.Content != nil {
			keys := make(map[string]string, len(c.Content))
			for k := range c.Content {
				keys[k] = ""
			}
			c.Content = keys
		}
		cp.Secrets[i] = c
	}
	return &cp
}

// relationByIdent is the relation of uni named "endpoint:id", or nil.
func relationByIdent(uni *charmapi.Universe, ident string) *charmapi.Relation {
	for i := range uni.Relations {
		if uni.Relations[i].Ident == ident {
			return &uni.Relations[i]
		}
	}
	return nil
}

// sealResults seals the secret contents of results with the store's
// cluster key before they are proposed: only this node, the one that
// admits them, ever holds them in plaintext. A result whose contents
// cannot be sealed (no cluster key here) fails, naming why.
func sealResults(store Store, results []model.Result) {
	var sl model.Sealer
	_ = store.View(func(st *model.State) error {
		sl = st.Sealer()
		return nil
	})
	for i := range results {
		if err := model.SealResults(sl, results[i:i+1]); err != nil {
			r := &results[i]
			*r = model.Result{Unit: r.Unit, Hash: r.Hash, Seen: r.Seen, Leader: r.Leader,
				Error: "its secrets could not be sealed: " + err.Error()}
		}
	}
}
