package model

import "slices"

// The secret audience index: for each unit or service a secret shows to
// (its owner, and each grantee), the ids of those secrets. VisibleSecrets
// reads it, so that building a unit's universe costs what the unit may
// see, not every secret in the state. It is part of the derived lookups
// (index): built from Secrets by lookups (after a decode, a restore or
// on a clone), and kept up to date by putSecret and dropSecret, through
// which every change to Secrets goes. A grant whose relation is gone
// stays indexed until revoked or removed: VisibleSecrets still checks
// each candidate with SecretSees.
type secretIndex map[string]map[string]struct{}

// indexedBy lists the units and services s is indexed under: its owner
// and its grantees, each once.
func indexedBy(s *Secret) []string {
	out := make([]string, 0, 1+len(s.Grants))
	if s.Owner != "" {
		out = append(out, s.Owner)
	}
	for who := range s.Grants {
		if who != s.Owner {
			out = append(out, who)
		}
	}
	return out
}

// buildSecretIndex indexes every one of secrets.
func buildSecretIndex(secrets map[string]*Secret) secretIndex {
	ix := secretIndex{}
	for id, sec := range secrets {
		ix.add(id, sec)
	}
	return ix
}

func (ix secretIndex) add(id string, s *Secret) {
	for _, who := range indexedBy(s) {
		ids := ix[who]
		if ids == nil {
			ids = map[string]struct{}{}
			ix[who] = ids
		}
		ids[id] = struct{}{}
	}
}

func (ix secretIndex) remove(id string, s *Secret) {
	for _, who := range indexedBy(s) {
		if ids := ix[who]; ids != nil {
			delete(ids, id)
			if len(ids) == 0 {
				delete(ix, who)
			}
		}
	}
}

// putSecret sets secret id to s, a new record (Secrets are replaced
// whole), and re-indexes it.
func (st *State) putSecret(id string, s *Secret) {
	if st.idx != nil {
		if old := st.Secrets[id]; old != nil {
			st.idx.secrets.remove(id, old)
		}
		st.idx.secrets.add(id, s)
	}
	st.Secrets = withEntry(st.Secrets, id, s)
}

// dropSecret removes secret id and its index entries.
func (st *State) dropSecret(id string) {
	if st.idx != nil {
		if old := st.Secrets[id]; old != nil {
			st.idx.secrets.remove(id, old)
		}
	}
	st.Secrets = withoutEntry(st.Secrets, id)
}

// secretCandidates lists, sorted and each once, the ids of the secrets
// indexed under unit or svc: those unit may see, and grants whose
// relation is gone.
func (st *State) secretCandidates(unit, svc string) []string {
	ix := st.lookups().secrets
	a, b := ix[unit], ix[svc]
	out := make([]string, 0, len(a)+len(b))
	for id := range a {
		out = append(out, id)
	}
	for id := range b {
		if _, dup := a[id]; !dup {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}
