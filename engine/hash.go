package engine

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"sync"

	"github.com/fixpoint/fixpoint/charmapi"
)

// Hash is the staleness hash of a universe. It leaves out what the unit
// wrote itself (its local settings, its private state, and its service's
// app bags and leader data when it leads), events and attempt: like Juju,
// a unit is never woken by its own writes. hash_fields_test.go holds the
// list of what is hashed and what is not, and why; a new universe field
// fails it until it is put on one of them.
func Hash(u *charmapi.Universe) string {
	h, _ := hashCounted(u)
	return h
}

// hashCounted is Hash that also says how many bytes it hashed. It writes
// a canonical encoding straight into the hash - every string
// length-prefixed, every map in key order - instead of going through
// encoding/json's reflection, which would cost more than the rest of a
// rebuild.
func hashCounted(u *charmapi.Universe) (string, int) {
	return hashWith(u, nil)
}

// hashWith is hashCounted given, for each of u's relations, its members
// in name order (build): the same bytes are hashed, without sorting the
// member names again in every universe that shows them. With members
// nil it sorts u's own maps.
func hashWith(u *charmapi.Universe, members [][]*member) (string, int) {
	e := encoders.Get().(*encoder)
	defer encoders.Put(e)
	e.buf = e.buf[:0]
	e.str(u.API)
	e.str(u.Unit)
	e.str(u.Service)
	e.str(u.Charm)
	e.str(u.Life)
	e.boolean(u.Leader)
	e.str(u.Machine)
	e.str(u.Address)
	if u.Boot != 0 {
		// Only once the machine rebooted: other universes hash as they
		// did before reboots were counted.
		e.num(u.Boot)
	}
	e.config(u.Config)
	if len(u.Resources) > 0 {
		// Only when there are some: a universe without resources hashes
		// as it does in a fixpoint that has none.
		e.bag(u.Resources)
	}
	if !u.Leader {
		e.bag(u.LeaderData)
	} else {
		e.bag(nil)
	}
	e.num(len(u.Relations))
	for i := range u.Relations {
		r := &u.Relations[i]
		e.str(r.Ident)
		e.num(r.ID)
		e.str(r.Name)
		e.str(r.Interface)
		e.str(r.Role)
		e.str(r.Scope)
		e.str(r.RemoteService)
		if !u.Leader {
			e.bag(r.App)
		} else {
			e.bag(nil)
		}
		e.bag(r.RemoteApp)
		if members != nil {
			e.num(len(members[i]))
			for _, m := range members[i] {
				e.buf = append(e.buf, m.hashEncoding()...)
			}
			continue
		}
		units := slices.Sorted(maps.Keys(r.Units))
		e.num(len(units))
		for _, k := range units {
			e.str(k)
			e.bag(r.Units[k])
		}
	}
	// Written only when there is storage: the hash of every universe
	// without any stays what it is, so no unit reruns for it.
	if len(u.Storage) > 0 {
		e.num(len(u.Storage))
		for _, st := range u.Storage {
			e.str(st.ID)
			e.str(st.Name)
			e.str(st.Kind)
		}
	}
	if len(u.Secrets) > 0 {
		// Only then, so that universes without secrets keep their hash.
		e.secrets(u.Secrets)
	}
	sum := sha256.Sum256(e.buf)
	return hex.EncodeToString(sum[:16]), len(e.buf)
}

// hashEncoding returns the member's part of a universe's hash encoding.
func (m *member) hashEncoding() []byte {
	return kept(&m.hashed, func() []byte {
		e := encoders.Get().(*encoder)
		defer encoders.Put(e)
		e.buf = e.buf[:0]
		e.str(m.name)
		e.bag(m.data)
		return slices.Clone(e.buf)
	})
}

// secrets encodes what tells one view of the secrets from another: a
// revision's content never changes, so its number stands for it and no
// secret value is hashed.
func (e *encoder) secrets(ss []charmapi.Secret) {
	e.num(len(ss))
	for i := range ss {
		s := &ss[i]
		e.str(s.ID)
		e.str(s.Owner)
		e.str(s.Label)
		e.str(s.Description)
		e.str(s.Expire)
		e.str(s.Rotate)
		e.num(s.Revision)
		e.num(s.Latest)
		e.ints(s.Revisions)
		e.ints(s.Obsolete)
		e.str(s.NextRotate)
		e.num(s.RotateDue)
		e.ints(s.Expired)
		e.num(s.ExpireDue)
	}
}

func (e *encoder) ints(xs []int) {
	e.num(len(xs))
	for _, x := range xs {
		e.num(x)
	}
}

// encoder builds a canonical, unambiguous byte stream to hash: strings
// length-prefixed, maps in key order. Encoders are pooled so that a
// busy control plane hashes without allocating.
type encoder struct {
	buf  []byte
	keys []string
}

var encoders = sync.Pool{New: func() any { return &encoder{} }}

func (e *encoder) num(n int) { e.buf = binary.AppendUvarint(e.buf, uint64(n)) }

func (e *encoder) str(s string) {
	e.num(len(s))
	e.buf = append(e.buf, s...)
}

func (e *encoder) boolean(b bool) {
	if b {
		e.num(1)
	} else {
		e.num(0)
	}
}

func (e *encoder) bag(m map[string]string) {
	e.keys = e.keys[:0]
	for k := range m {
		e.keys = append(e.keys, k)
	}
	slices.Sort(e.keys)
	e.num(len(e.keys))
	for _, k := range e.keys {
		e.str(k)
		e.str(m[k])
	}
}

// config values are few and of four kinds; JSON spells each one way.
func (e *encoder) config(m map[string]any) {
	keys := slices.Sorted(maps.Keys(m))
	e.num(len(keys))
	for _, k := range keys {
		e.str(k)
		b, err := json.Marshal(m[k])
		if err != nil {
			panic("engine: unencodable config value: " + err.Error())
		}
		e.str(string(b))
	}
}

// digest hashes v's JSON encoding, which is canonical: struct fields in
// declaration order and map keys sorted. It names a hook's output, off the
// hot path; universes go through hashCounted.
func digest(v any) string {
	h := sha256.New()
	if err := json.NewEncoder(h).Encode(v); err != nil {
		panic("engine: unencodable value: " + err.Error())
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
