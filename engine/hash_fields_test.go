package engine

import (
	"reflect"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
)

// hashed lists the universe's fields that Hash covers, by path. A unit is
// woken when one of them changes.
var hashed = []string{
	"API", "Unit", "Service", "Charm", "Life", "Leader", "Machine", "Address", "Config", "Resources",
	"Boot",       // a reboot restarts the units of the machine
	"LeaderData", // only when the unit does not lead: the leader writes it
	"Relations.Ident", "Relations.ID", "Relations.Name", "Relations.Interface", "Relations.Role",
	"Relations.Scope", "Relations.RemoteService",
	"Relations.App", // only when the unit does not lead: the leader writes it
	"Relations.RemoteApp", "Relations.Units",
	"Storage.ID", "Storage.Name", "Storage.Kind", // a new instance runs its storage-attached hook
	"Secrets.ID", "Secrets.Owner", "Secrets.Label", "Secrets.Description", "Secrets.Expire",
	"Secrets.Rotate", "Secrets.Revision", "Secrets.Latest", "Secrets.Revisions", "Secrets.Obsolete",
	"Secrets.NextRotate", "Secrets.RotateDue", "Secrets.Expired", "Secrets.ExpireDue",
}

// notHashed lists the fields Hash leaves out, and why.
var notHashed = map[string]string{
	"State":                 "the unit's private state is its own write, and a unit is never woken by its own writes",
	"Relations.Local":       "the unit's own settings are its own write",
	"Events":                "derived from the change between two universes, not part of either",
	"Attempt":               "counts tries of one universe; a retry must not make it a different universe",
	"Dir":                   "where an in-process hook keeps its files in a test; not part of the universe's JSON",
	"Storage.Location":      "the instance's directory on the unit's machine, which the agent fills in; the id names it",
	"Relations.Departed":    "the last settings of members that left, for old -departed hooks; the member's leaving already changed Units",
	"Credential":            "read by credential-get when a hook asks; Juju runs no hook when trust or the credential changes",
	"MachineID":             "the machine's Juju id, fixed for the unit's life: a unit never moves between machines",
	"Env":                   "the unit's environment, fixed for its life, which the agent fills in from the work it is handed",
	"Leaving":               "the unit's own last settings in relations it is leaving, for old -departed and -broken hooks; the leaving already changed Relations",
	"Secrets.Content":       "a revision's content never changes: its number (Secrets.Revision) is hashed instead, so no secret value is",
	"Secrets.LatestContent": "the latest revision's content, which Secrets.Latest stands for",
}

// TestHashCoversEveryField fails when a field is added to the universe
// without deciding whether it makes a unit stale: every field must be on
// one of the two lists, and changing it must change the hash exactly when
// it is on the hashed one.
func TestHashCoversEveryField(t *testing.T) {
	listed := map[string]bool{}
	for _, p := range hashed {
		listed[p] = true
	}
	for p := range notHashed {
		if listed[p] {
			t.Errorf("%s is on both lists", p)
		}
		listed[p] = true
	}
	var paths []string
	walkFields(reflect.TypeOf(charmapi.Universe{}), "", &paths)
	for _, p := range paths {
		if !listed[p] {
			t.Errorf("Universe field %s is neither hashed (engine/hash.go) nor on notHashed with a reason: decide whether a change to it must make the unit stale", p)
		}
		delete(listed, p)
	}
	for p := range listed {
		t.Errorf("%s is listed but is not a field of the universe", p)
	}
	for _, p := range paths {
		base := sampleUniverse()
		before := Hash(base)
		if !mutate(reflect.ValueOf(base).Elem(), p) {
			t.Errorf("%s: the test cannot change a field of this kind; teach mutate", p)
			continue
		}
		changed := Hash(base) != before
		if _, leftOut := notHashed[p]; changed == leftOut {
			t.Errorf("%s: changing it changed the hash: %v; listed as hashed: %v", p, changed, !leftOut)
		}
	}
}

// walkFields appends the path of every field of t, descending into the
// elements of slices of structs.
func walkFields(t reflect.Type, prefix string, out *[]string) {
	for f := range t.Fields() {
		p := prefix + f.Name
		if f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct && f.Type.Elem() != reflect.TypeOf(charmapi.Event{}) {
			walkFields(f.Type.Elem(), p+".", out)
			continue
		}
		*out = append(*out, p)
	}
}

// sampleUniverse is a non-leader's universe with one relation, every field
// set.
func sampleUniverse() *charmapi.Universe {
	return &charmapi.Universe{API: charmapi.API, Unit: "web/0", Service: "web", Charm: "c", Life: "alive", Machine: "m", MachineID: "0", Boot: 1, Address: "10.0.0.1",
		Leaving:    map[string]map[string]string{"old:0": {"e": "5"}},
		Credential: &charmapi.Credential{Type: "lxd", Name: "localhost", Region: "r", Endpoint: "https://e", AuthType: "certificate", Secret: "secret:cn0gqa6qs7s1bm0kfp8g"},
		Config:     map[string]any{"port": 80}, Resources: map[string]string{"r": "d"}, LeaderData: map[string]string{"k": "v"}, State: map[string]string{"s": "1"},
		Events: []charmapi.Event{{Hook: "install"}}, Attempt: 1, Dir: "/tmp/web-0", Env: &charmapi.Env{Name: "shop", UUID: "u"},
		Relations: []charmapi.Relation{{Ident: "db:1", ID: 1, Name: "db", Interface: "kv", Role: "requirer", Scope: "global", RemoteService: "db",
			Local: map[string]string{"a": "1"}, App: map[string]string{"b": "2"}, RemoteApp: map[string]string{"c": "3"},
			Units: map[string]map[string]string{"db/0": {"d": "4"}}}},
		Storage: []charmapi.Storage{{ID: "data/0", Name: "data", Kind: "filesystem", Location: "/var/lib/fixpoint/storage/web-0/data/0"}},
		Secrets: []charmapi.Secret{{ID: "secret:cn0gqa6qs7s1bm0kfp8g", Owner: "unit", Label: "l", Description: "d", Expire: "2030-01-01T00:00:00Z",
			Rotate: "daily", Revision: 1, Latest: 2, Content: map[string]string{"pass": "x"}, LatestContent: map[string]string{"pass": "y"},
			Revisions: []int{1, 2}, Obsolete: []int{1}, NextRotate: "2030-01-02T00:00:00Z", RotateDue: 1, Expired: []int{1}, ExpireDue: 2}}}
}

// mutate changes the field at path in v; it reports false for a kind it
// does not know.
func mutate(v reflect.Value, path string) bool {
	for i := 0; i < len(path); i++ {
		if path[i] == '.' {
			return mutate(v.FieldByName(path[:i]).Index(0), path[i+1:])
		}
	}
	f := v.FieldByName(path)
	switch f.Kind() {
	case reflect.String:
		f.SetString(f.String() + "x")
	case reflect.Bool:
		f.SetBool(!f.Bool())
	case reflect.Int:
		f.SetInt(f.Int() + 1)
	case reflect.Map:
		if f.IsNil() {
			f.Set(reflect.MakeMap(f.Type()))
		}
		elem := reflect.New(f.Type().Elem()).Elem()
		if elem.Kind() == reflect.Map {
			elem = reflect.MakeMap(elem.Type())
		} else if elem.Kind() == reflect.String || elem.Kind() == reflect.Interface {
			elem.Set(reflect.ValueOf("new"))
		}
		f.SetMapIndex(reflect.ValueOf("added"), elem)
	case reflect.Slice:
		f.Set(reflect.Append(f, reflect.New(f.Type().Elem()).Elem()))
	case reflect.Pointer:
		// Set when it was nil, nil when it was set.
		if f.IsNil() {
			f.Set(reflect.New(f.Type().Elem()))
		} else {
			f.SetZero()
		}
	default:
		return false
	}
	return true
}
