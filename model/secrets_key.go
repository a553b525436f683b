package model

import (
	"fmt"
	"slices"
	"strings"
)

// ClusterKey is a rotation of the cluster key: the new key, sealed under
// the current one (every server opens it with the key it holds and keeps
// it), and the secrets' revisions sealed again under the new key, by id,
// in revision order. A secret that gained or lost a revision since the
// proposer read it keeps its old seals: the old key stays in every
// server's keyring, so they still open.
type ClusterKey struct {
	// ID is the new key's id; Wrapped the key, sealed (Sealer) under the
	// current one with aad KeyAAD(ID).
	ID      string              `json:"id"`
	Wrapped string              `json:"wrapped"`
	Reseal  map[string][]string `json:"reseal,omitempty"`
}

// KeyAAD binds a wrapped cluster key to its id.
func KeyAAD(id string) string { return "fixpoint cluster key " + id }

func (k *ClusterKey) check() error {
	if len(k.ID) != 16 || strings.Trim(k.ID, "0123456789abcdef") != "" {
		return fmt.Errorf("secret key id %s is not 16 hex digits", Quote(k.ID, 24))
	}
	if k.Wrapped == "" || len(k.Wrapped) > 1024 {
		return fmt.Errorf("secret key %s: the wrapped key is missing or too long", k.ID)
	}
	for id, seals := range k.Reseal {
		if err := CheckSecretID(id); err != nil {
			return fmt.Errorf("reseal %s: %w", Quote(id, 24), err)
		}
		if len(seals) > MaxSecretRevisions {
			return fmt.Errorf("reseal secret:%s: %d revisions; the limit is %d", id, len(seals), MaxSecretRevisions)
		}
		for _, sl := range seals {
			if sl == "" || len(sl) > maxSealed {
				return fmt.Errorf("reseal secret:%s: a sealed content is empty or over %d bytes", id, maxSealed)
			}
		}
	}
	return nil
}

// reseal replaces the seals of the secrets k re-sealed, and returns the
// audience of those it changed.
func (st *State) reseal(k *ClusterKey) []string {
	moved := map[string]bool{}
	for _, id := range sortedKeys(k.Reseal) {
		s := st.Secrets[id]
		seals := k.Reseal[id]
		if s == nil || len(s.Revisions) != len(seals) {
			continue
		}
		c := s.copy()
		for i := range c.Revisions {
			c.Revisions[i].Sealed = seals[i]
		}
		st.putSecret(id, c)
		for _, who := range secretAudience(c) {
			moved[who] = true
		}
	}
	return slices.Sorted(func(yield func(string) bool) {
		for k := range moved {
			if !yield(k) {
				return
			}
		}
	})
}

// ResealAll opens every revision of every secret with from and seals it
// with to, for a ClusterKey command.
func (st *State) ResealAll(from, to Sealer) (map[string][]string, error) {
	out := map[string][]string{}
	for _, id := range sortedKeys(st.Secrets) {
		s := st.Secrets[id]
		for _, r := range s.Revisions {
			content, err := OpenContent(from, id, r.Sealed)
			if err != nil {
				return nil, err
			}
			sealed, err := SealContent(to, id, content)
			if err != nil {
				return nil, err
			}
			out[id] = append(out[id], sealed)
		}
	}
	return out, nil
}
