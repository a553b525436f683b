package juju

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/engine/legacy"
	"github.com/fixpoint/fixpoint/model"
)

func TestSecretDetails(t *testing.T) {
	app := &api.SecretInfo{ID: "secret:cn0gqa6qs7s1bm0kfp8g", Owner: "application db", Label: "pw", Revision: 2, Rotate: "daily",
		NextRotate: "2026-01-02T03:04:05Z", Content: map[string]string{"password": "x"},
		Revisions: []api.SecretRevisionInfo{{Revision: 1}, {Revision: 2, Expire: "2026-02-01T00:00:00Z"}},
		Grants:    []api.SecretGrantInfo{{To: "web", Relation: 3}, {To: "web/0", Relation: -1}}}
	d := SecretDetails(app, "shop", func(id int) string { return RelationTag(id, []string{"web:db", "db:db"}) }, true)
	if d.Owner != "db" || d.Label != "pw" || d.Name != "" || d.Revision != 2 || d.Rotation != "daily" || d.Rotates != "2026-01-02T03:04:05Z" {
		t.Errorf("application secret %+v", d)
	}
	if d.Content == nil || d.Content.Data["password"] != "x" {
		t.Errorf("content %+v", d.Content)
	}
	if len(d.Revisions) != 2 || d.Revisions[1].Expires != "2026-02-01T00:00:00Z" || d.Revisions[0].Backend != "internal" {
		t.Errorf("revisions %+v", d.Revisions)
	}
	want := []SecretAccess{{Target: "application-web", Scope: "relation-web.db#db.db", Role: "view"}, {Target: "unit-web-0", Scope: "model-" + ModelUUID("shop"), Role: "view"}}
	if len(d.Access) != 2 || d.Access[0] != want[0] || d.Access[1] != want[1] {
		t.Errorf("access %+v", d.Access)
	}
	// JSON: content's keys under Data, as Juju's encoding/json writes them.
	b, _ := json.Marshal(d)
	if !strings.Contains(string(b), `"content":{"Data":{"password":"x"}}`) {
		t.Errorf("JSON %s", b)
	}
	// A user secret is the model's, its label its name; a unit's is the
	// unit's; the list leaves grants out.
	user := SecretDetails(&api.SecretInfo{ID: "secret:a", Owner: "user", Label: "dbpass", Grants: []api.SecretGrantInfo{{To: "web"}}}, "shop", nil, false)
	if user.Owner != "<model>" || user.Name != "dbpass" || user.Label != "" || user.Access != nil {
		t.Errorf("user secret %+v", user)
	}
	if u := SecretDetails(&api.SecretInfo{ID: "secret:b", Owner: "unit web/0"}, "shop", nil, false); u.Owner != "web/0" {
		t.Errorf("unit secret %+v", u)
	}
	// Times are the control plane's; a secret made while it recorded
	// none shows Go's zero time, which jubilant parses.
	timed := SecretDetails(&api.SecretInfo{ID: "secret:c", Owner: "user", Created: "2026-01-01T00:00:00Z", Updated: "2026-01-02T00:00:00Z",
		Revisions: []api.SecretRevisionInfo{{Revision: 1, Created: "2026-01-01T00:00:00Z"}}}, "shop", nil, true)
	if timed.Created != "2026-01-01T00:00:00Z" || timed.Updated != "2026-01-02T00:00:00Z" || timed.Revisions[0].Created != "2026-01-01T00:00:00Z" || timed.Revisions[0].Updated != "2026-01-01T00:00:00Z" {
		t.Errorf("timed secret %+v", timed)
	}
	if user.Created != NoTime || user.Updated != NoTime {
		t.Errorf("untimed secret: created %q, updated %q, want %s", user.Created, user.Updated, NoTime)
	}
	if BareID("secret:cn0g") != "cn0g" {
		t.Error("BareID")
	}
}

func TestShowUnit(t *testing.T) {
	src := testSource(t)
	st := src.State
	st.Units["web/0"].Settings = model.NewRelBags(map[int]*model.Bag{1: model.NewBag(map[string]string{"want": "pg"}, 0)})
	st.Units["db/0"].Settings = model.NewRelBags(map[int]*model.Bag{1: model.NewBag(map[string]string{"host": "10.0.0.1"}, 0)})
	st.Relations[1].App = map[string]*model.Bag{"db": model.NewBag(map[string]string{"version": "14"}, 0), "web": model.NewBag(map[string]string{"mine": "1"}, 0)}
	info, ok := ShowUnit(st, "web/0", "1.0")
	if !ok || info.Charm != "local:web-charm-0" || !info.Leader || info.Machine != "0" || info.WorkloadVersion != "1.0" || len(info.OpenedPorts) != 2 {
		t.Fatalf("web/0: %+v", info)
	}
	var rel *RelationData
	for i := range info.RelationInfo {
		if info.RelationInfo[i].RelationID == 1 {
			rel = &info.RelationInfo[i]
		}
	}
	if rel == nil || rel.Endpoint != "db" || rel.RelatedEndpoint != "db" || rel.ApplicationData["version"] != "14" || rel.LocalUnit.Data["want"] != "pg" {
		t.Fatalf("relation 1 of web/0: %+v", rel)
	}
	if _, ok := ShowUnit(st, "web/9", ""); ok {
		t.Error("ShowUnit of a unit that is not there")
	}
	// A unit without ports lists none as [], as jubilant requires the key.
	b, _ := json.Marshal(mustUnit(t, st, "db/0"))
	if !strings.Contains(string(b), `"opened-ports":[]`) {
		t.Errorf("db/0 JSON %s", b)
	}
}

func mustUnit(t *testing.T, st *model.State, name string) UnitInfo {
	t.Helper()
	info, ok := ShowUnit(st, name, "")
	if !ok {
		t.Fatalf("no unit %s", name)
	}
	return info
}

func TestServiceConfig(t *testing.T) {
	sc := &api.ServiceConfig{Service: "db", Config: map[string]*api.ConfigValue{
		"port":  {Type: "int", Value: 5432.0, Default: 5432.0, Source: "default"},
		"user":  {Type: "string", Value: "admin", Source: "set"},
		"token": {Type: "secret", Source: "unset"},
		"gone":  {Type: "?", Value: "x", Source: "set"},
		"debug": {Type: "boolean", Value: false, Default: false, Source: "default"},
	}}
	c := ServiceConfig(sc, "db-charm", true)
	if c.Application != "db" || c.Charm != "db-charm" || c.ApplicationConfig["trust"].Value != true || c.ApplicationConfig["trust"].Source != "user" {
		t.Errorf("config %+v", c)
	}
	if v := c.Settings["port"]; v.Value != int64(5432) || v.Source != "default" {
		t.Errorf("port %+v", v)
	}
	if c.Settings["user"].Source != "user" || c.Settings["token"].Value != nil {
		t.Errorf("user %+v token %+v", c.Settings["user"], c.Settings["token"])
	}
	if _, ok := c.Settings["gone"]; ok {
		t.Error("a key the charm no longer declares is listed")
	}
	// A false value is a value: Juju (and jubilant) read "value" when set.
	b, _ := json.Marshal(c.Settings["debug"])
	if !strings.Contains(string(b), `"value":false`) {
		t.Errorf("debug JSON %s", b)
	}
}

func TestModelAndVersion(t *testing.T) {
	m := Model(ModelSource{Name: "shop", Controller: "prod", Machines: []string{"0", "1"}, Secrets: 3})
	if m.Name != "admin/shop" || m.ShortName != "shop" || m.UUID != legacy.ModelUUID("shop") || m.ModelType != "iaas" ||
		m.ControllerName != "prod" || m.ControllerUUID == ControllerUUID("other") || m.Life != "alive" || m.AgentVersion != Version || len(m.Machines) != 2 {
		t.Errorf("model %+v", m)
	}
	// An added environment's uuid is the one it was given.
	if m := Model(ModelSource{Name: "other", UUID: "913d5c8e-463c-485c-bf0d-d79b5c5b515b"}); m.UUID != "913d5c8e-463c-485c-bf0d-d79b5c5b515b" {
		t.Errorf("added model's uuid %s", m.UUID)
	}
	// model-config: the model's interval as written, else the default.
	if c := ModelConfig("shop", "u", "", "5m0s")["update-status-hook-interval"]; c.Value != "5m0s" || c.Source != "default" {
		t.Errorf("default interval %+v", c)
	}
	if c := ModelConfig("shop", "u", "1m", "5m0s"); c["update-status-hook-interval"] != (ModelConfigValue{"1m", "model"}) || c["name"] != (ModelConfigValue{"shop", "model"}) {
		t.Errorf("model-config %+v", c)
	}
	// jubilant's Version._from_dict: major.minor.patch-release-arch.
	if v := Versions("abc", true); !regexp.MustCompile(`^\d+\.\d+\.\d+-[^-]+-[^-]+$`).MatchString(v.Version) || v.TreeState != "dirty" {
		t.Errorf("version %+v", v)
	}
	if !strings.HasPrefix(Binary(), "3.6.") {
		t.Errorf("the front reports %s; it implements Juju 3.6's commands", Binary())
	}
}
