package charmapi

import (
	"bytes"
	"testing"
)

// FuzzUniverse feeds a charm's entry point arbitrary universes, as a hook
// would read them from the engine or a hand-written file: decoding and the
// accessors a hook calls never panic.
func FuzzUniverse(f *testing.F) {
	for _, seed := range []string{
		`{"api": "fixpoint/v1", "unit": "web/0", "service": "web", "life": "alive", "leader": true, "config": {"port": 80}, "relations": [{"ident": "db:7", "id": 7, "name": "db", "role": "requires", "units": {"db/0": {"host": "h"}}, "app": {"k": "v"}}], "events": [{"hook": "db-relation-joined", "relation": "db:7", "remote_unit": "db/0"}]}`,
		`{"api": "fixpoint/v1", "unit": "web", "relations": [{"ident": ""}, null]}`,
		`{"api": "fixpoint/v0"}`,
		`{"api": "fixpoint/v1", "unit": "x/99999999999999999999", "config": {"port": "eighty", "ratio": null}}`,
		`[]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		_ = run(func(u *Universe) (*Result, error) {
			_ = u.UnitNumber()
			_ = u.Dying()
			_ = u.HasEvent("config-changed")
			opts := u.Options()
			_ = opts
			for i := range u.Relations {
				r := &u.Relations[i]
				_ = r.IsPeer()
				for _, m := range r.Members() {
					_ = r.Member(m)
					_ = r.Get(m, "host")
				}
				_ = r.MembersWith("host")
				_ = r.RemoteAppValue("k")
				_ = r.AppValue("k")
				_ = u.RelationByIdent(r.Ident)
				_ = u.Relation(r.Name)
				_ = u.RelationsNamed(r.Name)
			}
			for _, e := range u.Events {
				_ = e.String()
			}
			return NewResult(), nil
		}, bytes.NewReader(data), &out)
	})
}
