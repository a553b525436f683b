package api

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/unijson"
	"github.com/fixpoint/fixpoint/engine/wire"
)

// fullWork sets every field of a Work, its universe, relation, event and
// status, with strings that need escaping.
func fullWork() wire.Work {
	odd := "a\"b\\c\n\r\t\b\f\x01<>&\u2028\u2029é\xff日"
	bag := map[string]string{"z": odd, "a": "1", odd: "k"}
	return wire.Work{Unit: "db/0", Hash: "h", Charm: "c", Legacy: true, Environment: "env", Principal: "web/0", Env: "dev" + odd, EnvUUID: "u",
		Status: &charmapi.Status{State: "active", Message: odd}, Ports: []string{"80/tcp", "443/tcp"},
		UniverseJSON: json.RawMessage(`{}`),
		Action:       &wire.Action{ID: 7, Name: "backup", Params: map[string]any{"to": odd, "n": 2.0}, Exec: odd},
		Universe: &charmapi.Universe{API: charmapi.API, Unit: "db/0", Service: "db", Charm: "c", Life: "alive", Leader: true,
			Machine: "m1", MachineID: "0", Boot: 2, Address: "10.0.0.1", Config: map[string]any{"n": 3.5, "s": odd, "l": []any{true, nil}}, Resources: map[string]string{"software": "ab" + odd},
			LeaderData: bag, State: bag, Attempt: 2, Dir: "/not/encoded",
			Relations: []charmapi.Relation{{Ident: "db:1", ID: 1, Name: "db", Interface: "kv", Role: "provider", Scope: "global",
				RemoteService: "web", Local: bag, App: bag, RemoteApp: bag,
				Units:    map[string]map[string]string{"web/1": bag, "web/0": nil, "web/2": {}},
				Departed: map[string]map[string]string{"web/3": bag}}},
			Leaving:    map[string]map[string]string{"cluster:2": bag, "old:0": {}},
			Credential: &charmapi.Credential{Type: "lxd", Name: odd, Region: "r", Endpoint: "https://e", AuthType: "certificate", Secret: "secret:cn0gqa6qs7s1bm0kfp8g"},
			Env:        &charmapi.Env{Name: odd, UUID: "0f8e2a1c-4b6d-4e5f-8a9b-1c2d3e4f5a6b"},
			Storage:    []charmapi.Storage{{ID: "data/0", Name: "data", Kind: "filesystem", Location: "/var/lib/fixpoint/agent/storage/db-0/data/0"}},
			Events: []charmapi.Event{{Hook: "db-relation-departed", Relation: "db:1", RemoteUnit: "web/3", RemoteApp: "web", Departing: "web/3", Storage: "data/0",
				Secret: "secret:cn0gqa6qs7s1bm0kfp8g", SecretLabel: odd, SecretRevision: 2}},
			Secrets: []charmapi.Secret{{ID: "secret:cn0gqa6qs7s1bm0kfp8g", Owner: "unit", Label: odd, Description: odd, Expire: "2030-01-01T00:00:00Z",
				Rotate: "daily", Revision: 1, Latest: 2, Content: bag, LatestContent: bag, Revisions: []int{1, 2}, Obsolete: []int{1},
				NextRotate: "2030-01-02T00:00:00Z", RotateDue: 1, Expired: []int{1}, ExpireDue: 2}},
		}}
}

// unset names the fields of v (a struct) and of the structs it holds that
// are zero, skipping those encoding/json leaves out (json:"-").
func unset(v reflect.Value, path string) []string {
	var out []string
	for i := 0; i < v.NumField(); i++ {
		f, fv := v.Type().Field(i), v.Field(i)
		if f.Tag.Get("json") == "-" && f.Name != "UniverseJSON" && f.Name != "Dir" {
			continue
		}
		if fv.IsZero() {
			out = append(out, path+f.Name)
			continue
		}
		for fv.Kind() == reflect.Pointer {
			fv = fv.Elem()
		}
		if fv.Kind() == reflect.Slice && fv.Len() > 0 {
			fv = fv.Index(0)
		}
		if fv.Kind() == reflect.Struct {
			out = append(out, unset(fv, path+f.Name+".")...)
		}
	}
	return out
}

// appendWork writes what encoding/json writes, byte for byte, for a work
// with every field set (a field added to Work or the universe fails here
// until appendWork encodes it) and for the empty and nil cases.
func TestAppendWorkIsEncodingJSON(t *testing.T) {
	full := fullWork()
	if missing := unset(reflect.ValueOf(full), ""); len(missing) > 0 {
		t.Fatalf("fullWork leaves %v unset: set them here, and encode them in appendWork", missing)
	}
	works := []wire.Work{full, {}, {Universe: &charmapi.Universe{}},
		{Universe: &charmapi.Universe{Relations: []charmapi.Relation{{}}, Events: []charmapi.Event{{}}, LeaderData: map[string]string{}}},
		{Status: &charmapi.Status{}, Ports: []string{}}}
	// Encoded ahead, as a pass of hand-outs does: the same bytes again.
	for i := range works {
		w := works[i]
		w.UniverseJSON = nil
		want, err := json.Marshal(&w)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendWork(nil, &w)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("work %d:\nappendWork   %s\nencoding/json %s", i, got, want)
		}
		if w.UniverseJSON, err = unijson.Append(nil, w.Universe, nil); err != nil {
			t.Fatal(err)
		}
		if got, err = appendWork(nil, &w); err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("work %d encoded ahead:\nappendWork   %s\nencoding/json %s", i, got, want)
		}
	}
}

// BenchmarkWriteWork encodes the hand-out of one unit of a 100-unit
// service with peers (bench/agents' shape) both ways.
func BenchmarkWriteWork(b *testing.B) {
	units := map[string]map[string]string{}
	for i := 0; i < 99; i++ {
		units["db/"+string(rune('a'+i%26))+string(rune('a'+i/26))] = map[string]string{"address": "10.0.0.1", "port": "5432", "user": "db", "ready": "true"}
	}
	w := wire.Work{Unit: "db/0", Hash: "0123456789abcdef", Charm: "c", Environment: "agents", Status: &charmapi.Status{State: "active"},
		Universe: &charmapi.Universe{API: charmapi.API, Unit: "db/0", Service: "db", Charm: "c", Life: "alive", Machine: "m1", Address: "10.0.0.1",
			Config: map[string]any{"max_connections": 101.0}, LeaderData: map[string]string{"password": "x"}, State: map[string]string{},
			Relations: []charmapi.Relation{{Ident: "cluster:1", ID: 1, Name: "cluster", Interface: "c", Role: "peer", Scope: "global", RemoteService: "db",
				Local: map[string]string{"address": "10.0.0.1"}, App: map[string]string{}, RemoteApp: map[string]string{}, Units: units}},
			Events: []charmapi.Event{}, Attempt: 1}}
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(&w); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("appendWork", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			var err error
			if buf, err = appendWork(buf[:0], &w); err != nil {
				b.Fatal(err)
			}
		}
	})
}
