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
	"github.com/fixpoint/fixpoint/engine"
)

// resultCases are results with the verdict the result rules give them.
// model's rules (CheckPort, CheckStatus, CheckSettings) are the authority:
// the Go fast path, the #Result schema and the engine's decoder must all
// agree with them on every case (see TestResultRulesAgree). rule marks the
// cases whose refusal is one of those rules: then the error says the same
// thing, at the same path, whichever of the three refuses.
var resultCases = []struct {
	json string
	ok   bool
	want string // a substring of the error
	rule bool
}{
	{`{}`, true, "", false},
	{`{"relations": {"db:7": {"local": {"host": "10.0.0.1"}, "app": {}}}, "leader_data": {"k": "v"}, "status": {"state": "active", "message": "ready"}, "state": {"x": "1"}, "ports": ["80/tcp", "53/udp", "8000-8080/tcp"]}`, true, "", false},
	{`{"status": {"state": "blocked"}}`, true, "", false},
	{`{"secrets": [{"op": "add", "id": "secret:cn0gqa6qs7s1bm0kfp8g", "owner": "unit", "label": "l", "content": {"password": "x"}}, {"op": "remove", "id": "secret:cn0gqa6qs7s1bm0kfp8g", "revision": 1}]}`, true, "", false},
	{`{"secrets": [{"op": "steal", "id": "secret:cn0gqa6qs7s1bm0kfp8g"}]}`, false, `op must be`, true},
	{`{"ports": ["icmp", "1/tcp", "65535/udp", "1-65535/tcp"]}`, true, "", false},
	{`{"ports": ["8080/tcp@website", "8080/tcp@db_admin", "icmp@peer", "1-9/udp@a-b"]}`, true, "", false},
	{`{"ports": ["8080/tcp@"]}`, false, `ports.0: `, true},
	{`{"ports": ["8080/tcp@Web"]}`, false, `ports.0: `, true},
	{`{"ports": ["8080/tcp@db@x"]}`, false, `ports.0: `, true},
	{`{"ports": ["@db"]}`, false, `ports.0: `, true},
	{`[]`, false, "", false},
	{`{"status": {"state": "happy"}}`, false, `status.state: status state must be "active"`, true},
	{`{"status": {"message": "x"}}`, false, "status.state: is missing", false},
	{`{"status": {"state": "active", "msg": "x"}}`, false, `status.msg: unknown field "msg"`, false},
	{`{"status": {"state": "active", "message": "` + strings.Repeat("é", 1025) + `"}}`, false, "status.message: status message is", true},
	{`{"status": "active"}`, false, "status: ", false},
	{`{"state": {"n": 3}}`, false, "state.n: settings values must be strings", false},
	{`{"state": null}`, false, "state: ", false},
	{`{"state": {"": "x"}}`, false, "settings keys must be 1 to 256 characters long", true},
	{`{"state": {"` + strings.Repeat("k", 257) + `": "x"}}`, false, "settings keys must be 1 to 256 characters long", true},
	{`{"relations": {"db:7": {"local": {"a": true}}}}`, false, `relations."db:7".local.a: settings values must be strings`, false},
	{`{"relations": {"db:7": {"remote": {}}}}`, false, `relations."db:7".remote: unknown field "remote"`, false},
	{`{"relations": {"db:7": "x"}}`, false, `relations."db:7": `, false},
	{`{"relations": []}`, false, "relations: ", false},
	{`{"ports": ["80"]}`, false, `ports.0: `, true},
	{`{"ports": ["0/tcp"]}`, false, `ports.0: `, true},
	{`{"ports": ["99999/tcp"]}`, false, `ports.0: `, true},
	{`{"ports": ["080/tcp"]}`, false, `ports.0: `, true},
	{`{"ports": ["80/tcp", "icmp/tcp"]}`, false, `ports.1: `, true},
	{`{"ports": "80/tcp"}`, false, "ports: ", false},
	{`{"stat": {}}`, false, `stat: unknown field "stat"`, false},
	{`{"status": {"state": "active"}} x`, false, "JSON", false},
	// Keys given twice: CUE unifies them and rejects only differing values;
	// the Go path refuses both, as encoding/json would silently keep the last.
	{`{"state": {"a": "1", "a": "2"}}`, false, "state.a: ", false},
	{`{"state": {"a": "1", "a": "1"}}`, false, "twice", false},
	{`not json`, false, "JSON", false},
}

// goOnly are rules the CUE schema cannot state: it accepts these, the Go
// rules refuse them. Each is named here so that no other disagreement can
// hide.
var goOnly = []struct{ json, why string }{
	{`{"ports": ["90-80/tcp"]}`, "a range's bounds are compared as numbers (model.CheckPort)"},
	{`{"state": {"k": "` + strings.Repeat("v", 64<<10) + `"}}`, "a bag's total size is counted in bytes (model.CheckSettings)"},
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

// TestResultRulesAgree holds the #Result schema and the engine's decoder
// to the Go rules, case by case.
func TestResultRulesAgree(t *testing.T) {
	uni := &charmapi.Universe{API: charmapi.API, Unit: "web/0", Service: "web", Leader: true,
		Relations: []charmapi.Relation{{Ident: "db:7", ID: 7, Name: "db"}}}
	for _, c := range resultCases {
		dup := strings.Contains(c.json, `"a": "1", "a"`)
		goErr := checkResultGo([]byte(c.json))
		if (goErr == nil) != c.ok {
			t.Errorf("%.80s: Go says %v, want ok=%v", c.json, goErr, c.ok)
		}
		if !dup { // CUE reads a key given twice leniently
			cueErr := validateJSON([]byte(c.json), "#Result")
			if (goErr == nil) != (cueErr == nil) {
				t.Errorf("%.80s: Go says %v, CUE says %v", c.json, goErr, cueErr)
			}
			if c.rule && (cueErr == nil || !strings.Contains(cueErr.Error(), c.want)) {
				t.Errorf("%.80s: CUE error %v lacks %q", c.json, cueErr, c.want)
			}
		}
		if dup || c.json == `[]` || c.json == "not json" || strings.HasSuffix(c.json, " x") || strings.Contains(c.json, "null") {
			// The engine decodes as encoding/json does: it keeps the last
			// of two keys, reads null as a field left out, and refuses
			// what is not one object with its own wording.
			continue
		}
		_, engErr := engine.DecodeResult(uni, []byte(c.json))
		if (goErr == nil) != (engErr == nil) {
			t.Errorf("%.80s: Go says %v, the engine says %v", c.json, goErr, engErr)
		}
		if c.rule && (engErr == nil || !strings.Contains(engErr.Error(), c.want)) {
			t.Errorf("%.80s: engine error %v lacks %q", c.json, engErr, c.want)
		}
		if c.rule && (goErr == nil || !strings.Contains(goErr.Error(), c.want)) {
			t.Errorf("%.80s: Go error %v lacks %q", c.json, goErr, c.want)
		}
	}
	for _, c := range goOnly {
		goErr := checkResultGo([]byte(c.json))
		_, engErr := engine.DecodeResult(uni, []byte(c.json))
		cueErr := validateJSON([]byte(c.json), "#Result")
		if goErr == nil || engErr == nil || cueErr != nil {
			t.Errorf("%.60s (%s): want Go and engine to refuse and CUE to accept; Go %v, engine %v, CUE %v", c.json, c.why, goErr, engErr, cueErr)
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
		{"#Secret", reflect.TypeFor[charmapi.Secret]()},
		{"#SecretChange", reflect.TypeFor[charmapi.SecretChange]()},
	} {
		want := map[string]string{}
		for i := 0; i < c.typ.NumField(); i++ {
			tag := c.typ.Field(i).Tag.Get("json")
			name, opts, _ := strings.Cut(tag, ",")
			if name == "-" {
				continue // never encoded
			}
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
