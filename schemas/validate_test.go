package schemas

import (
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	"github.com/fixpoint/fixpoint/charmapi"
)

// resultCases are results with the verdict #Result gives them; the Go fast
// path must agree on every one.
var resultCases = []struct {
	json string
	ok   bool
	want string // a substring of the error
}{
	{`{}`, true, ""},
	{`{"relations": {"db:7": {"local": {"host": "10.0.0.1"}, "app": {}}}, "leader_data": {"k": "v"}, "status": {"state": "active", "message": "ready"}, "state": {"x": "1"}, "ports": ["80/tcp", "53/udp", "8000-8080/tcp"]}`, true, ""},
	{`{"status": {"state": "blocked"}}`, true, ""},
	{`[]`, false, ""},
	{`{"status": {"state": "happy"}}`, false, `status.state: status state must be "active"`},
	{`{"status": {"message": "x"}}`, false, "status.state: is missing"},
	{`{"status": {"state": "active", "msg": "x"}}`, false, `status.msg: unknown field "msg"`},
	{`{"status": "active"}`, false, "status: "},
	{`{"state": {"n": 3}}`, false, "state.n: settings values must be strings"},
	{`{"state": null}`, false, "state: "},
	{`{"relations": {"db:7": {"local": {"a": true}}}}`, false, `relations."db:7".local.a: settings values must be strings`},
	{`{"relations": {"db:7": {"remote": {}}}}`, false, `relations."db:7".remote: unknown field "remote"`},
	{`{"relations": {"db:7": "x"}}`, false, `relations."db:7": `},
	{`{"relations": []}`, false, "relations: "},
	{`{"ports": ["80"]}`, false, `ports.0: a port is written "80/tcp"`},
	{`{"ports": "80/tcp"}`, false, "ports: "},
	{`{"stat": {}}`, false, `stat: unknown field "stat"`},
	{`{"status": {"state": "active"}} x`, false, "JSON"},
	// Keys given twice: CUE unifies them and rejects only differing values;
	// the Go path refuses both, as encoding/json would silently keep the last.
	{`{"state": {"a": "1", "a": "2"}}`, false, "state.a: "},
	{`{"state": {"a": "1", "a": "1"}}`, false, "twice"},
	{`not json`, false, "JSON"},
}

func TestValidateResult(t *testing.T) {
	for _, c := range resultCases {
		err := ValidateResult([]byte(c.json))
		if (err == nil) != c.ok {
			t.Errorf("%s: err = %v, want ok=%v", c.json, err, c.ok)
			continue
		}
		if err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %q, want it to contain %q", c.json, err, c.want)
		}
	}
}

// TestResultGoAgreesWithCUE holds the Go fast path to the schema: same
// verdict on every case (duplicate keys aside, which CUE reads leniently).
func TestResultGoAgreesWithCUE(t *testing.T) {
	for _, c := range resultCases {
		if strings.Contains(c.json, `"a": "1", "a"`) {
			continue
		}
		goErr, cueErr := checkResultGo([]byte(c.json)), validateJSON([]byte(c.json), "#Result")
		if (goErr == nil) != (cueErr == nil) {
			t.Errorf("%s: Go says %v, CUE says %v", c.json, goErr, cueErr)
		}
		if goErr != nil && cueErr != nil && c.want != "" && !strings.Contains(goErr.Error(), c.want) {
			t.Errorf("%s: Go error %q lacks %q (CUE: %q)", c.json, goErr, c.want, cueErr)
		}
	}
}

func TestValidateUniverse(t *testing.T) {
	// What charmapi marshals, even with nil maps and slices, is valid.
	for _, u := range []charmapi.Universe{
		{API: charmapi.API, Unit: "web/0", Service: "web", Charm: "abc", Life: "alive", Attempt: 1},
		{
			API: charmapi.API, Unit: "web/12", Service: "web", Charm: "abc", Life: "dying", Leader: true,
			Machine: "local", Address: "10.0.0.1",
			Config:     map[string]any{"port": 80, "ratio": 0.5, "name": "x", "debug": true},
			LeaderData: map[string]string{"a": "b"}, State: map[string]string{},
			Relations: []charmapi.Relation{{
				Ident: "db:7", ID: 7, Name: "db", Interface: "sql", Role: "requires", Scope: "global",
				RemoteService: "db", Local: map[string]string{"a": "1"},
				Units: map[string]map[string]string{"db/0": {"host": "h"}},
			}},
			Events:  []charmapi.Event{{Hook: "db-relation-joined", Relation: "db:7", RemoteUnit: "db/0", RemoteApp: "db"}},
			Attempt: 3,
		},
	} {
		data, err := json.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		if err := ValidateUniverse(data); err != nil {
			t.Errorf("%s: %v", data, err)
		}
	}
	for _, c := range []struct{ json, want string }{
		{`{"api": "fixpoint/v1"}`, "unit: is missing"},
		{`{"api": "fixpoint/v1", "unit": "web", "service": "web", "charm": "c", "life": "alive", "leader": false, "config": null, "leader_data": null, "state": null, "relations": null, "events": null, "attempt": 1}`, `unit: unit must be written "service/N"`},
		{`{"api": "fixpoint/v1", "unit": "web/0", "service": "web", "charm": "c", "life": "alive", "leader": false, "config": null, "leader_data": null, "state": null, "relations": [{"ident": "db"}], "events": null, "attempt": 1, "extra": 1}`, `extra: unknown field "extra"`},
	} {
		err := ValidateUniverse([]byte(c.json))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.json, err, c.want)
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%s: %T, want *Error", c.json, err)
		}
	}
}

// TestSchemasMatchGoTypes checks that #Universe and #Result name exactly
// the JSON fields of the charmapi types, required where Go always writes
// the field and optional where it has omitempty.
func TestSchemasMatchGoTypes(t *testing.T) {
	ctx := cuecontext.New()
	s, err := buildSchemas(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		def string
		typ reflect.Type
	}{
		{"#Universe", reflect.TypeFor[charmapi.Universe]()},
		{"#UniverseRelation", reflect.TypeFor[charmapi.Relation]()},
		{"#Event", reflect.TypeFor[charmapi.Event]()},
		{"#Result", reflect.TypeFor[charmapi.Result]()},
		{"#RelationResult", reflect.TypeFor[charmapi.RelationResult]()},
		{"#Status", reflect.TypeFor[charmapi.Status]()},
	} {
		want := map[string]string{}
		for i := 0; i < c.typ.NumField(); i++ {
			tag := c.typ.Field(i).Tag.Get("json")
			name, opts, _ := strings.Cut(tag, ",")
			kind := "required"
			if strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero") {
				kind = "optional"
			}
			want[name] = kind
		}
		got := map[string]string{}
		it, err := s.LookupPath(cue.ParsePath(c.def)).Fields(cue.Optional(true))
		if err != nil {
			t.Fatal(err)
		}
		for it.Next() {
			kind := "required"
			if it.Selector().ConstraintType() == cue.OptionalConstraint {
				kind = "optional"
			}
			got[it.Selector().Unquoted()] = kind
		}
		if !reflect.DeepEqual(keys(got), keys(want)) {
			t.Errorf("%s fields %v, Go %s has %v", c.def, keys(got), c.typ, keys(want))
			continue
		}
		for n, k := range want {
			if got[n] != k {
				t.Errorf("%s.%s is %s, Go %s.%s is %s", c.def, n, got[n], c.typ, n, k)
			}
		}
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
