// Package unijson writes universes as encoding/json writes them (the same
// bytes: fields in order, omitempty, sorted map keys, HTML-safe string
// escapes), without reflection: a universe's bags, one per remote member,
// were 90 % of a hand-out's encoding time through encoding/json's map
// encoder, and the hand-outs of a change are what its agents wait for.
// engine/api's TestAppendWorkIsEncodingJSON pins the equality, field by
// field.
package unijson

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// Units appends the members of u.Relations[i], r, as encoding/json
// writes r.Units, and reports whether it did; false leaves b as it was
// and the map is encoded. A caller that keeps each member's encoding
// (AppendMember) and knows the members in key order writes them without
// a map lookup or a sort per member in every universe: the 100 universes
// of a 100-unit service with peers hold 9,900 members but only 100
// distinct ones.
type Units func(b []byte, i int, r *charmapi.Relation) ([]byte, bool)

// AppendMember appends one member of a relation's units as encoding/json
// writes it in the map: its name, a colon and its settings.
func AppendMember(b []byte, name string, data map[string]string) []byte {
	return appendEntry(b, name, data, appendBag)
}

// Append appends u's JSON to b. units, if not nil, writes the relations'
// members it knows.
func Append(b []byte, u *charmapi.Universe, units Units) ([]byte, error) {
	if u == nil {
		return append(b, "null"...), nil
	}
	b = stringField(b, `{"api":`, u.API)
	b = stringField(b, `,"unit":`, u.Unit)
	b = stringField(b, `,"service":`, u.Service)
	b = stringField(b, `,"charm":`, u.Charm)
	b = stringField(b, `,"life":`, u.Life)
	b = append(b, `,"leader":`...)
	b = strconv.AppendBool(b, u.Leader)
	if u.Machine != "" {
		b = stringField(b, `,"machine":`, u.Machine)
	}
	if u.MachineID != "" {
		b = stringField(b, `,"machine_id":`, u.MachineID)
	}
	if u.Boot != 0 {
		b = strconv.AppendInt(append(b, `,"boot":`...), int64(u.Boot), 10)
	}
	if u.Address != "" {
		b = stringField(b, `,"address":`, u.Address)
	}
	// Config holds any JSON value an operator set: few keys, left to
	// encoding/json.
	cfg, err := json.Marshal(u.Config)
	if err != nil {
		return b, err
	}
	b = append(b, `,"config":`...)
	b = append(b, cfg...)
	if len(u.Resources) > 0 {
		b = bagField(b, `,"resources":`, u.Resources)
	}
	b = bagField(b, `,"leader_data":`, u.LeaderData)
	b = bagField(b, `,"state":`, u.State)
	b = append(b, `,"relations":`...)
	b = appendArray(b, u.Relations, func(b []byte, i int, r *charmapi.Relation) []byte { return appendRelation(b, i, r, units) })
	if len(u.Leaving) > 0 {
		b = append(b, `,"leaving":`...)
		b = appendBags(b, u.Leaving)
	}
	if len(u.Storage) > 0 {
		b = append(b, `,"storage":`...)
		b = appendArray(b, u.Storage, appendStorage)
	}
	if len(u.Secrets) > 0 {
		// Few, and only where charms use them: left to encoding/json.
		sec, err := json.Marshal(u.Secrets)
		if err != nil {
			return b, err
		}
		b = append(append(b, `,"secrets":`...), sec...)
	}
	if u.Credential != nil {
		// One per trusted unit, flat: left to encoding/json.
		cred, err := json.Marshal(u.Credential)
		if err != nil {
			return b, err
		}
		b = append(append(b, `,"credential":`...), cred...)
	}
	b = append(b, `,"events":`...)
	b = appendArray(b, u.Events, appendEvent)
	b = append(b, `,"attempt":`...)
	b = strconv.AppendInt(b, int64(u.Attempt), 10)
	if u.Env != nil {
		b = stringField(b, `,"env":{"name":`, u.Env.Name)
		b = append(stringField(b, `,"uuid":`, u.Env.UUID), '}')
	}
	return append(b, '}'), nil
}

func appendRelation(b []byte, i int, r *charmapi.Relation, units Units) []byte {
	b = stringField(b, `{"ident":`, r.Ident)
	b = append(b, `,"id":`...)
	b = strconv.AppendInt(b, int64(r.ID), 10)
	b = stringField(b, `,"name":`, r.Name)
	b = stringField(b, `,"interface":`, r.Interface)
	b = stringField(b, `,"role":`, r.Role)
	b = stringField(b, `,"scope":`, r.Scope)
	b = stringField(b, `,"remote_service":`, r.RemoteService)
	b = bagField(b, `,"local":`, r.Local)
	b = bagField(b, `,"app":`, r.App)
	b = bagField(b, `,"remote_app":`, r.RemoteApp)
	b = append(b, `,"units":`...)
	written := false
	if units != nil {
		b, written = units(b, i, r)
	}
	if !written {
		b = appendBags(b, r.Units)
	}
	if len(r.Departed) > 0 {
		b = append(b, `,"departed":`...)
		b = appendBags(b, r.Departed)
	}
	return append(b, '}')
}

func appendEvent(b []byte, _ int, e *charmapi.Event) []byte {
	b = stringField(b, `{"hook":`, e.Hook)
	for _, f := range [...]struct{ key, v string }{
		{`,"relation":`, e.Relation}, {`,"remote_unit":`, e.RemoteUnit},
		{`,"remote_app":`, e.RemoteApp}, {`,"departing_unit":`, e.Departing},
		{`,"storage":`, e.Storage},
		{`,"secret_id":`, e.Secret}, {`,"secret_label":`, e.SecretLabel},
	} {
		if f.v != "" {
			b = stringField(b, f.key, f.v)
		}
	}
	if e.SecretRevision != 0 {
		b = strconv.AppendInt(append(b, `,"secret_revision":`...), int64(e.SecretRevision), 10)
	}
	return append(b, '}')
}

func appendStorage(b []byte, _ int, st *charmapi.Storage) []byte {
	b = stringField(b, `{"id":`, st.ID)
	b = stringField(b, `,"name":`, st.Name)
	b = stringField(b, `,"kind":`, st.Kind)
	if st.Location != "" {
		b = stringField(b, `,"location":`, st.Location)
	}
	return append(b, '}')
}

// stringField appends key (with its separator and colon) and v quoted.
func stringField(b []byte, key, v string) []byte { return AppendString(append(b, key...), v) }

// bagField appends key (with its separator and colon) and the bag m.
func bagField(b []byte, key string, m map[string]string) []byte {
	return appendBag(append(b, key...), m)
}

// appendArray appends xs as encoding/json does a slice: null when nil.
func appendArray[T any](b []byte, xs []T, elem func([]byte, int, *T) []byte) []byte {
	if xs == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = elem(b, i, &xs[i])
	}
	return append(b, ']')
}

// appendObject appends m as encoding/json does a map with string keys:
// null when nil, keys in order.
func appendObject[V any](b []byte, m map[string]V, value func([]byte, V) []byte) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	// A peer relation's members are a universe's largest map: room for
	// 128 names on the stack keeps their sort off the heap (and out of
	// the collector's write barriers while it runs).
	var small [128]string
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendEntry(b, k, m[k], value)
	}
	return append(b, '}')
}

// appendEntry appends one entry of an object: its key quoted, a colon
// and its value.
func appendEntry[V any](b []byte, k string, v V, value func([]byte, V) []byte) []byte {
	b = AppendString(b, k)
	b = append(b, ':')
	return value(b, v)
}

// appendBags appends members' bags, in member order.
func appendBags(b []byte, m map[string]map[string]string) []byte {
	return appendObject(b, m, appendBag)
}

// appendBag appends one settings bag, in key order.
func appendBag(b []byte, m map[string]string) []byte {
	return appendObject(b, m, AppendString)
}

// AppendString appends s quoted as encoding/json quotes it with HTML
// escaping on (its default): model.AppendJSONString's rule.
func AppendString(b []byte, s string) []byte { return model.AppendJSONString(b, s, true) }
