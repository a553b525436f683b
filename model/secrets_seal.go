package model

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Sealer seals secret contents under the cluster key and opens them
// again (raftstore.Keyring). aad binds a sealed content to its secret, so
// that one secret's sealed revision pasted into another does not open.
type Sealer interface {
	Seal(aad string, plain []byte) (string, error)
	Open(aad string, sealed string) ([]byte, error)
}

// ErrNoSealer is opening or sealing on a state without a cluster key.
var ErrNoSealer = errors.New("this node holds no cluster key to seal or open secrets with")

// SetSealer gives the state the cluster key its universes open secrets
// with. It is not replicated: each server sets its own.
func (st *State) SetSealer(s Sealer) { st.sealer = s }

// Sealer is the state's cluster key, nil when it has none.
func (st *State) Sealer() Sealer { return st.sealer }

// secretAAD is what a secret's sealed contents are bound to.
func secretAAD(id string) string { return "fixpoint secret " + id }

// SealContent seals content for secret id.
func SealContent(sl Sealer, id string, content map[string]string) (string, error) {
	if sl == nil {
		return "", ErrNoSealer
	}
	b, err := json.Marshal(content)
	if err != nil {
		return "", fmt.Errorf("seal secret:%s: %w", id, err)
	}
	return sl.Seal(secretAAD(id), b)
}

// OpenContent opens a sealed content of secret id. Its error never holds
// the content.
func OpenContent(sl Sealer, id, sealed string) (map[string]string, error) {
	if sl == nil {
		return nil, ErrNoSealer
	}
	b, err := sl.Open(secretAAD(id), sealed)
	if err != nil {
		return nil, fmt.Errorf("open secret:%s: %w", id, err)
	}
	var out map[string]string
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("open secret:%s: content is not a key-value map", id)
	}
	return out, nil
}

// OpenRevision opens revision rev of s with the state's key.
func (st *State) OpenRevision(s *Secret, rev int) (map[string]string, error) {
	r := s.Revision(rev)
	if r == nil {
		return nil, fmt.Errorf("secret:%s has no revision %d", s.ID, rev)
	}
	return OpenContent(st.sealer, s.ID, r.Sealed)
}

// SealResults seals the content of every secret change in results, in
// place, with sl: what the node that proposes results runs first.
func SealResults(sl Sealer, results []Result) error {
	for i := range results {
		for j := range results[i].Secrets {
			c := &results[i].Secrets[j]
			if c.Content == nil {
				continue
			}
			sealed, err := SealContent(sl, c.ID, c.Content)
			if err != nil {
				return fmt.Errorf("%s: %w", results[i].Unit, err)
			}
			c.Sealed, c.Content = sealed, nil
		}
	}
	return nil
}

// secretValues lists the values of the tracked and latest revisions of
// every Juju secret u may read, for Scrub; a revision this state cannot
// open is left out (its hook cannot have read it either).
func (st *State) secretValues(u *Unit) []string {
	var out []string
	for _, s := range st.VisibleSecrets(u.Name, u.Service) {
		revs := []int{s.Latest()}
		if c, ok := s.Consumers[u.Name]; ok && c.Tracked != 0 && c.Tracked != s.Latest() {
			revs = append(revs, c.Tracked)
		}
		for _, rev := range revs {
			content, err := st.OpenRevision(s, rev)
			if err != nil {
				continue
			}
			for _, k := range sortedKeys(content) {
				out = append(out, content[k])
			}
		}
	}
	return out
}
