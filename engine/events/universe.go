package events

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// FromUniverse builds the Snapshot a unit saw in a universe, with tokens
// that are short hashes of the content. A universe is always one the unit
// was installed with; to derive the first run, pass a nil before to Derive.
// Tokens from FromUniverse compare only with tokens from FromUniverse.
func FromUniverse(u *charmapi.Universe) (*Snapshot, error) {
	if u == nil {
		return nil, fmt.Errorf("no universe")
	}
	s := &Snapshot{
		Unit:      u.Unit,
		Installed: true,
		Life:      u.Life,
		Charm:     u.Charm,
		Resources: model.ResourcesToken(u.Resources),
		Address:   u.Address,
		Leader:    u.Leader,
		Relations: make(map[string]*RelSnap, len(u.Relations)),
		Boot:      u.Boot,
	}
	for _, st := range u.Storage {
		s.Storage = append(s.Storage, st.ID)
	}
	if s.Life == "" {
		s.Life = Alive
	}
	if s.Life != Alive && s.Life != Dying {
		return nil, fmt.Errorf("unit %s: life is %q; want %q or %q", u.Unit, u.Life, Alive, Dying)
	}
	var err error
	if s.Config, err = token(u.Config); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if s.LeaderData, err = token(u.LeaderData); err != nil {
		return nil, fmt.Errorf("leader_data: %w", err)
	}
	for i := range u.Relations {
		rel := &u.Relations[i]
		r := &RelSnap{
			ID:        rel.ID,
			Endpoint:  rel.Name,
			RemoteApp: rel.RemoteService,
			Peer:      rel.Role == "peer",
			Alive:     true,
			Members:   make(map[string]string, len(rel.Units)),
		}
		if r.Endpoint == "" {
			return nil, fmt.Errorf("relation %d (%q): no endpoint name", rel.ID, rel.Ident)
		}
		if rel.Ident != "" && rel.Ident != r.Ident() {
			return nil, fmt.Errorf("relation %q: ident does not match name %q and id %d", rel.Ident, rel.Name, rel.ID)
		}
		if _, dup := s.Relations[r.Ident()]; dup {
			return nil, fmt.Errorf("relation %s is listed twice", r.Ident())
		}
		for unit, settings := range rel.Units {
			if r.Members[unit], err = token(settings); err != nil {
				return nil, fmt.Errorf("relation %s unit %s: %w", r.Ident(), unit, err)
			}
		}
		app := rel.RemoteApp
		if r.Peer && len(app) == 0 {
			// Over a peer relation the remote service is the unit's own,
			// whose bag a universe may carry only as app.
			app = rel.App
		}
		if r.App, err = token(app); err != nil {
			return nil, fmt.Errorf("relation %s remote_app: %w", r.Ident(), err)
		}
		s.Relations[r.Ident()] = r
	}
	return s, nil
}

// token is a short hash of v's canonical JSON (encoding/json sorts map
// keys); an empty map is "", like a bag never written.
func token[V any](m map[string]V) (string, error) {
	if len(m) == 0 {
		return "", nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8]), nil
}
