package engine

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// Diff marks the changes of secret keys, and their redaction keeps
// markers while hiding values; the universes are not changed.
func TestDiffMarksSecretsAndRedactsThem(t *testing.T) {
	before := &charmapi.Universe{Unit: "web/0", Service: "web", Config: map[string]any{"seed": "s1"},
		Relations: []charmapi.Relation{{Ident: "db:1", Units: map[string]map[string]string{"db/0": {"host": "a"}}}}}
	after := &charmapi.Universe{Unit: "web/0", Service: "web", Config: map[string]any{"seed": "s2"},
		Relations: []charmapi.Relation{{Ident: "db:1", RemoteApp: map[string]string{"api-key": "k-123456"},
			Units: map[string]map[string]string{"db/0": {"host": "b", "password": "pw-123456"}}}}}
	changes := Diff(before, after)
	st := model.NewState()
	st.Charms["h"] = &model.Charm{Hash: "h", Meta: model.CharmMeta{Name: "web", Options: map[string]model.Option{"seed": {Type: model.SecretType}}}}
	st.Services["web"] = &model.Service{Name: "web", Charm: "h"}
	markSecretConfig(st, "web", changes)
	secret := map[string]bool{}
	for _, c := range changes {
		secret[c.Key] = c.Secret
	}
	want := map[string]bool{"config.seed": true, "relations.db:1.remote_app.api-key": true,
		"relations.db:1.units.db/0.password": true, "relations.db:1.units.db/0.host": false}
	for k, w := range want {
		if s, ok := secret[k]; !ok || s != w {
			t.Errorf("change %s: secret %v (listed %v), want %v; changes %+v", k, s, ok, w, changes)
		}
	}
	red := RedactChanges(changes)
	out, _ := json.Marshal(red)
	for _, v := range []string{"pw-123456", "k-123456", `\"s1\"`, `\"s2\"`} {
		if strings.Contains(string(out), v) {
			t.Errorf("redacted changes hold %s: %s", v, out)
		}
	}
	for _, c := range red {
		switch c.Key {
		case "relations.db:1.units.db/0.password":
			if c.Old != "(unset)" || c.New != model.Redact("pw-123456") {
				t.Errorf("redacted %s", c)
			}
		case "relations.db:1.units.db/0.host":
			if c.Old != `"a"` || c.New != `"b"` {
				t.Errorf("a plain change was redacted: %s", c)
			}
		}
	}
	if raw, _ := json.Marshal(changes); !strings.Contains(string(raw), "pw-123456") {
		t.Error("RedactChanges changed its argument")
	}
}

// A run's stderr and error lose the secrets its unit sees and those its
// changes carried; a universe and a unit's detail lose every secret
// value and keep the rest.
func TestRunUniverseAndDetailRedacted(t *testing.T) {
	run := Run{Unit: "db/0", Outcome: RunError, Error: "bad seed s-abcdef", Stderr: "old pw-old111 new pw-new222",
		Changes: []Change{{Key: "relations.db:1.local.password", Old: `"pw-old111"`, New: `"pw-new222"`, Secret: true}}}
	r := run.Redacted([]string{"s-abcdef"})
	for _, s := range []string{r.Error, r.Stderr, r.Changes[0].Old, r.Changes[0].New} {
		if strings.Contains(s, "pw-") || strings.Contains(s, "s-abcdef") {
			t.Errorf("redacted run holds a secret: %q", s)
		}
	}
	if r.Stderr != "old "+model.Redact("pw-old111")+" new "+model.Redact("pw-new222") || run.Changes[0].Old != `"pw-old111"` {
		t.Errorf("stderr %q; the run's own changes now %+v", r.Stderr, run.Changes)
	}

	uni := &charmapi.Universe{Config: map[string]any{"seed": "s-abcdef", "port": 1.0}, LeaderData: map[string]string{"token": "t-1"},
		State: map[string]string{"root-password": "rp"}, Relations: []charmapi.Relation{{Local: map[string]string{"password": "p1", "host": "h"},
			App: map[string]string{"secret": "a1"}, RemoteApp: map[string]string{"credentials": "c1"},
			Units: map[string]map[string]string{"db/0": {"password": "p2"}}, Departed: map[string]map[string]string{"db/1": {"password": "p3"}}}}}
	opts := map[string]model.Option{"seed": {Type: model.SecretType}, "port": {Type: "int"}}
	ru := RedactUniverse(uni, opts)
	data, _ := json.Marshal(ru)
	for _, v := range []string{"s-abcdef", "t-1", `"rp"`, "p1", "a1", "c1", "p2", "p3"} {
		if strings.Contains(string(data), v) {
			t.Errorf("redacted universe holds %s: %s", v, data)
		}
	}
	if ru.Relations[0].Local["host"] != "h" || ru.Config["port"] != 1.0 || uni.Relations[0].Local["password"] != "p1" || uni.Config["seed"] != "s-abcdef" {
		t.Errorf("redacted universe %s; original now %+v", data, uni)
	}

	d := &UnitDetail{Unit: "db/0", State: map[string]string{"api_key": "k1"}, Relations: []*UnitRelation{{ID: 1, Settings: map[string]string{"password": "p1", "host": "h"}}}}
	rd := d.Redacted()
	if rd.State["api_key"] != model.Redact("k1") || rd.Relations[0].Settings["password"] != model.Redact("p1") || rd.Relations[0].Settings["host"] != "h" {
		t.Errorf("redacted detail: %+v %+v", rd.State, rd.Relations[0].Settings)
	}
	if d.Relations[0].Settings["password"] != "p1" {
		t.Error("Redacted changed the detail")
	}
}
