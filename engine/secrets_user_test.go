package engine

import (
	"context"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/keyring"
)

// userSecretShop deploys db and web, and user secret db-pass (its
// password password) granted to web, whose option dbpass names it; db's
// names it too, ungranted.
func userSecretShop(t *testing.T, s *memStore, password string) {
	t.Helper()
	opts := map[string]model.Option{"dbpass": {Type: model.SecretType}}
	charms := map[string]*model.Charm{
		"h-db":  {Hash: "h-db", Meta: model.CharmMeta{Name: "db", Options: opts}},
		"h-web": {Hash: "h-web", Meta: model.CharmMeta{Name: "web", Options: opts}},
	}
	ref := map[string]any{"dbpass": "secret:db-pass"}
	env := model.Environment{APIVersion: model.APIVersion, Name: "shop",
		Services: map[string]model.ServiceSpec{"db": {CharmHash: "h-db", Units: intp(1), Config: ref}, "web": {CharmHash: "h-web", Units: intp(1), Config: ref}},
		Secrets:  map[string]model.UserSecretSpec{"db-pass": {Content: map[string]model.SecretSource{"password": {File: "db.pass"}}, Grant: []string{"web"}}}}
	var revs map[string]string
	err := s.View(func(st *model.State) (err error) {
		revs, err = model.ReviseUserSecrets(st, &env, map[string]map[string]string{"db-pass": {"password": password}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(context.Background(), &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms, SecretRevisions: revs}}); err != nil {
		t.Fatal(err)
	}
}

// TestUserSecretReachesReconcileCharms: a reconcile charm finds the user
// secret its config names in its universe when its service is granted it,
// tracks it, and gets secret-changed when the operator's new value makes
// a new revision; a service not granted it never sees it.
func TestUserSecretReachesReconcileCharms(t *testing.T) {
	s := newMemStore()
	keys, err := keyring.Open(t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	s.st.SetSealer(keys)
	if _, err := s.Apply(context.Background(), &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: "m", Address: "10.0.0.9"}}); err != nil {
		t.Fatal(err)
	}
	userSecretShop(t, s, "pw-one-71c2")
	saw := map[string][]string{}
	var events []string
	hook := func(u *charmapi.Universe) *charmapi.Result {
		r := charmapi.NewResult()
		for _, ev := range u.Events {
			if ev.Secret != "" {
				events = append(events, u.Unit+" "+ev.Hook+" "+ev.Secret)
			}
		}
		uri, _ := u.Config["dbpass"].(string)
		sec := u.Secret(uri)
		if sec == nil {
			saw[u.Unit] = append(saw[u.Unit], "")
			return r.Blocked("not granted")
		}
		content := sec.Content
		if sec.Revision != sec.Latest {
			content = sec.LatestContent
			r.Secrets = append(r.Secrets, charmapi.SecretChange{Op: "track", ID: sec.ID, Revision: sec.Latest})
		}
		saw[u.Unit] = append(saw[u.Unit], content["password"])
		return r.Active("")
	}
	hooks := map[string]func(*charmapi.Universe) *charmapi.Result{"db": hook, "web": hook}
	runAll(t, s, hooks)
	if w := saw["web/0"]; len(w) == 0 || w[len(w)-1] != "pw-one-71c2" {
		t.Fatalf("web read %q", w)
	}
	if d := saw["db/0"]; len(d) == 0 || d[len(d)-1] != "" {
		t.Fatalf("db, not granted, read %q", d)
	}

	// The same value again: no run. A new one: web is told.
	saw, events = map[string][]string{}, nil
	userSecretShop(t, s, "pw-one-71c2")
	if runs := runAll(t, s, hooks); runs["web/0"] != 0 {
		t.Fatalf("an unchanged secret ran web: %v", runs)
	}
	userSecretShop(t, s, "pw-two-71c2")
	runAll(t, s, hooks)
	id := "secret:" + model.UserSecretID("shop", "db-pass")
	if w := saw["web/0"]; !slices_contains(events, "web/0 secret-changed "+id) || len(w) == 0 || w[len(w)-1] != "pw-two-71c2" {
		t.Fatalf("after the new value: events %q, web read %q", events, w)
	}
}
