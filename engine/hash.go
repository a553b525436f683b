package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/fixpoint/fixpoint/charmapi"
)

// Hash is the staleness hash of a universe. It leaves out what the unit
// wrote itself (its local settings, its private state, and its service's
// app bags and leader data when it leads), events and attempt: like Juju,
// a unit is never woken by its own writes.
func Hash(u *charmapi.Universe) string {
	h, _ := hashCounted(u)
	return h
}

// hashCounted is Hash that also says how many bytes it hashed.
func hashCounted(u *charmapi.Universe) (string, int) {
	v := *u
	v.Events, v.Attempt, v.State = nil, 0, nil
	if v.Leader {
		v.LeaderData = nil
	}
	v.Relations = make([]charmapi.Relation, len(u.Relations))
	for i, r := range u.Relations {
		r.Local = nil
		if v.Leader {
			r.App = nil
		}
		v.Relations[i] = r
	}
	return digestCounted(&v)
}

// digest hashes v's JSON encoding, which is canonical: struct fields in
// declaration order and map keys sorted.
func digest(v any) string {
	d, _ := digestCounted(v)
	return d
}

func digestCounted(v any) (string, int) {
	h := sha256.New()
	cw := &countWriter{w: h}
	if err := json.NewEncoder(cw).Encode(v); err != nil {
		panic("engine: unencodable value: " + err.Error())
	}
	return hex.EncodeToString(h.Sum(nil)[:16]), cw.n
}

type countWriter struct {
	w interface{ Write([]byte) (int, error) }
	n int
}

func (c *countWriter) Write(p []byte) (int, error) {
	c.n += len(p)
	return c.w.Write(p)
}
