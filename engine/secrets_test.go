package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/keyring"
)

// TestSecretFlowThroughTheController runs Juju's secret flow through the
// controller with Go hooks: db's leader adds a secret and grants it to
// web over their relation; web reads it (tracking revision 1); db sets a
// new revision and web gets secret-changed while it still reads 1; web
// refreshes and db gets secret-remove for the revision nobody tracks;
// the relation goes and web no longer sees the secret. Only the units a
// change reaches run, and the state holds no value in the clear.
func TestSecretFlowThroughTheController(t *testing.T) {
	s := newMemStore()
	keys, err := keyring.Open(t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	s.st.SetSealer(keys)
	if _, err := s.Apply(context.Background(), &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: "m", Address: "10.0.0.9"}}); err != nil {
		t.Fatal(err)
	}
	secretShop(t, s, "one", "no", true)
	id, err := charmapi.NewSecretID()
	if err != nil {
		t.Fatal(err)
	}
	removed := 0
	var webSaw []string
	var events []string
	hooks := map[string]func(*charmapi.Universe) *charmapi.Result{
		"db": func(u *charmapi.Universe) *charmapi.Result {
			r := charmapi.NewResult()
			for _, ev := range u.Events {
				if ev.Secret != "" {
					events = append(events, u.Unit+" "+ev.String()+" "+ev.SecretLabel)
				}
				if ev.Hook == "secret-remove" {
					r.Secrets = append(r.Secrets, charmapi.SecretChange{Op: "remove", ID: ev.Secret, Revision: ev.SecretRevision})
					removed = ev.SecretRevision
				}
			}
			sec := u.Secret("db-password")
			rel := u.Relation("db")
			// Derived from the config, so that the config does not hold
			// the value the state must not.
			version, _ := u.Config["password"].(string)
			password := "pw-" + version + "-3f9a"
			switch {
			case !u.Leader || rel == nil:
			case sec == nil:
				label := "db-password"
				r.Secrets = append(r.Secrets,
					charmapi.SecretChange{Op: "add", ID: id, Owner: "application", Label: &label, Content: map[string]string{"password": password}},
					charmapi.SecretChange{Op: "grant", ID: id, Relation: rel.Ident})
				r.SetApp(rel.Ident, map[string]string{"secret-id": id})
			case sec.Content["password"] != password:
				r.Secrets = append(r.Secrets, charmapi.SecretChange{Op: "set", ID: id, Content: map[string]string{"password": password}})
			}
			return r.Active("")
		},
		"web": func(u *charmapi.Universe) *charmapi.Result {
			r := charmapi.NewResult()
			for _, ev := range u.Events {
				if ev.Secret != "" {
					events = append(events, u.Unit+" "+ev.String()+" "+ev.SecretLabel)
				}
			}
			rel := u.Relation("db")
			if rel == nil {
				return r.Blocked("no db")
			}
			sec := u.Secret(rel.RemoteApp["secret-id"])
			if sec == nil {
				return r.Waiting("no secret")
			}
			content := sec.Content
			if sec.Revision == 0 || u.Config["refresh"] == "yes" && sec.Revision != sec.Latest {
				label := "db"
				content = sec.LatestContent
				r.Secrets = append(r.Secrets, charmapi.SecretChange{Op: "track", ID: sec.ID, Label: &label, Revision: sec.Latest})
			}
			webSaw = append(webSaw, content["password"])
			return r.Active("")
		},
	}
	runs := runAll(t, s, hooks)
	if runs["db/0"] == 0 || len(webSaw) == 0 || webSaw[len(webSaw)-1] != "pw-one-3f9a" {
		t.Fatalf("after the grant: runs %v, web read %v", runs, webSaw)
	}

	// A new revision: web is told, and keeps reading the one it tracks.
	events, webSaw = nil, nil
	secretShop(t, s, "two", "no", true)
	runs = runAll(t, s, hooks)
	if !slices_contains(events, "web/0 secret-changed "+id+" db") || len(webSaw) == 0 || webSaw[len(webSaw)-1] != "pw-one-3f9a" {
		t.Fatalf("after the set: events %q, web read %v, runs %v", events, webSaw, runs)
	}

	// web refreshes: revision 1 is obsolete and db removes it.
	events, webSaw = nil, nil
	secretShop(t, s, "two", "yes", true)
	runAll(t, s, hooks)
	if !slices_contains(events, "db/0 secret-remove "+id+"/1 db-password") || removed != 1 || webSaw[len(webSaw)-1] != "pw-two-3f9a" {
		t.Fatalf("after the refresh: events %q, removed %d, web read %v", events, removed, webSaw)
	}
	_ = s.View(func(st *model.State) error {
		sec := st.Secrets[strings.TrimPrefix(id, "secret:")]
		if sec == nil || len(sec.Revisions) != 1 || sec.Revisions[0].Rev != 2 || sec.Consumers["web/0"].Tracked != 2 {
			t.Errorf("secret in the state: %+v", sec)
		}
		b, _ := json.Marshal(st)
		for _, v := range []string{"pw-one-3f9a", "pw-two-3f9a"} {
			if strings.Contains(string(b), v) {
				t.Errorf("the state holds %s in the clear", v)
			}
		}
		return nil
	})

	// The relation goes: so does web's grant.
	secretShop(t, s, "two", "yes", false)
	_ = s.View(func(st *model.State) error {
		if uni, _ := Build(st, "web/0"); len(uni.Secrets) != 0 {
			t.Errorf("web/0 still sees %v after the relation went", uni.Secrets)
		}
		if uni, _ := Build(st, "db/0"); len(uni.Secrets) != 1 || uni.Secrets[0].Content["password"] != "pw-two-3f9a" {
			t.Errorf("db/0's own secret: %+v", uni.Secrets)
		}
		return nil
	})
}

func slices_contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// secretShop deploys db (its leader owns the secret; config password)
// and web (config refresh), related or not, on machine m.
func secretShop(t *testing.T, s *memStore, password, refresh string, related bool) {
	t.Helper()
	charms := map[string]*model.Charm{
		"h-db": {Hash: "h-db", Meta: model.CharmMeta{Name: "db", Provides: map[string]model.Endpoint{"db": {Interface: "kv"}},
			Options: map[string]model.Option{"password": {Type: "string"}}}},
		"h-web": {Hash: "h-web", Meta: model.CharmMeta{Name: "web", Requires: map[string]model.Endpoint{"db": {Interface: "kv"}},
			Options: map[string]model.Option{"refresh": {Type: "string"}}}},
	}
	env := model.Environment{APIVersion: model.APIVersion, Name: "shop",
		Services: map[string]model.ServiceSpec{
			"db":  {CharmHash: "h-db", Units: intp(1), Config: map[string]any{"password": password}},
			"web": {CharmHash: "h-web", Units: intp(1), Config: map[string]any{"refresh": refresh}}}}
	if related {
		env.Relations = map[string][]string{"web-db": {"web:db", "db:db"}}
	}
	if _, err := s.Apply(context.Background(), &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}}); err != nil {
		t.Fatal(err)
	}
}

// TestSecretWithoutAKeyFailsTheRun: a server with no cluster key can not
// seal a hook's secret, so that run fails, naming why, and nothing of it
// reaches the state.
func TestSecretWithoutAKeyFailsTheRun(t *testing.T) {
	s := newMemStore()
	if _, err := s.Apply(context.Background(), &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: "m", Address: "10.0.0.9"}}); err != nil {
		t.Fatal(err)
	}
	secretShop(t, s, "one", "no", false)
	id, _ := charmapi.NewSecretID()
	hooks := map[string]func(*charmapi.Universe) *charmapi.Result{
		"db": func(u *charmapi.Universe) *charmapi.Result {
			r := charmapi.NewResult()
			r.Secrets = []charmapi.SecretChange{{Op: "add", ID: id, Owner: "unit", Content: map[string]string{"password": "unsealable"}}}
			return r
		},
		"web": func(u *charmapi.Universe) *charmapi.Result { return charmapi.NewResult() },
	}
	ctl := NewController(s, Options{Window: 1})
	ctx := context.Background()
	work, err := ctl.WaitForWork(ctx, "m", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var reps []wire.Report
	for _, w := range work {
		out, _ := json.Marshal(hooks[w.Universe.Service](w.Universe))
		reps = append(reps, wire.Report{Unit: w.Unit, Hash: w.Hash, Output: out})
	}
	if _, err := ctl.Accept(ctx, "m", reps); err != nil {
		t.Fatal(err)
	}
	_ = s.View(func(st *model.State) error {
		u := st.Units["db/0"]
		if u.Error == nil || !strings.Contains(u.Error.Message, "could not be sealed") || strings.Contains(u.Error.Message, "unsealable") {
			t.Errorf("db/0's error: %+v", u.Error)
		}
		if len(st.Secrets) != 0 {
			t.Errorf("secrets in the state: %v", st.Secrets)
		}
		return nil
	})
}

// TestDiffNamesSecretRevisionsNotValues: `logs` shows that a secret
// moved, by revision, never its content.
func TestDiffNamesSecretRevisionsNotValues(t *testing.T) {
	const id = "secret:cn0gqa6qs7s1bm0kfp8g"
	before := &charmapi.Universe{Secrets: []charmapi.Secret{{ID: id, Revision: 1, Latest: 1, Content: map[string]string{"password": "old-value"}}}}
	after := &charmapi.Universe{Secrets: []charmapi.Secret{{ID: id, Revision: 1, Latest: 2, Content: map[string]string{"password": "old-value"}, LatestContent: map[string]string{"password": "new-value"}}}}
	got := Diff(before, after)
	if len(got) != 1 || got[0].Key != "secrets."+id || got[0].Old != "revision 1 of 1" || got[0].New != "revision 1 of 2" {
		t.Errorf("Diff = %+v", got)
	}
	for _, c := range append(got, Diff(nil, after)...) {
		if strings.Contains(c.Old+c.New, "value") {
			t.Errorf("a change shows a value: %+v", c)
		}
	}
}
