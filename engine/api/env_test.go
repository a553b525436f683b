package api_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// recording waits for n's cluster to be at a level that keeps the
// environment's document: a server alone raises it when it starts; a
// cluster formed before that is upgraded, as an operator would.
func recording(t *testing.T, n *testNode) {
	t.Helper()
	rafttest.Eventually(t, time.Minute, "the cluster's level keeps documents", func() error {
		if l := n.store.ClusterLevel().Level; l >= model.LevelRecorded {
			return nil
		}
		l, err := n.store.Upgrade(ctxT(t))
		return fmt.Errorf("level %d after an upgrade (%v)", l, err)
	})
}

// envCharm uploads a charm with a secret option and an option with a
// default to n, and returns it.
func envCharm(t *testing.T, n *testNode) *model.Charm {
	t.Helper()
	recording(t, n)
	archive := []byte("a charm archive for the environment document test")
	sum := sha256.Sum256(archive)
	hash := hex.EncodeToString(sum[:])
	if code, e, _ := call(t, http.MethodPut, n.addr+"/v1/charms/"+hash, operatorToken, archive); code/100 != 2 {
		t.Fatalf("upload: %d %v", code, e)
	}
	return &model.Charm{Hash: hash, Source: "./charms/db", Meta: model.CharmMeta{Name: "db",
		Provides: map[string]model.Endpoint{"db": {Interface: "sql"}},
		Options: map[string]model.Option{
			"password": {Type: model.SecretType},
			"port":     {Type: "int", Default: float64(5432)},
		}}}
}

// envDeploy is the environment "docs": db with units and its password.
func envDeploy(ch *model.Charm, units int) *model.Deploy {
	return &model.Deploy{
		Env: model.Environment{APIVersion: model.APIVersion, Name: "docs", Services: map[string]model.ServiceSpec{
			"db": {Charm: "./charms/db", CharmHash: ch.Hash, Units: &units, Config: map[string]any{"password": "pw-xyzzy-42"}}}},
		Charms: map[string]*model.Charm{ch.Hash: ch},
	}
}

// editOf is a deploy of what GET /v1/env answered, against its revision.
func editOf(doc *api.EnvDoc) *model.Deploy {
	return &model.Deploy{Env: doc.Env, Charms: doc.Charms, BaseIndex: doc.Revision}
}

// GET /v1/env: 404 before any apply; the operator reads the document
// with secret values redacted (revealed on ?reveal=1); a join token or an
// agent's credential is refused. The document deployed back against its
// revision changes nothing, keeps the secret value, and needs no upload.
func TestEnvDocumentReadAndDeployedBack(t *testing.T) {
	n := startNode(t, "n1")
	op := api.NewClient([]string{n.addr}, operatorToken, nil)
	_, err := op.Env(ctxT(t))
	if !errors.Is(err, api.ErrNotFound) || !strings.Contains(err.Error(), "no environment applied yet; run fixpoint apply -f FILE") {
		t.Fatalf("before any apply: %v", err)
	}
	if code, e, _ := call(t, http.MethodGet, n.addr+"/v1/env", operatorToken, nil); code != http.StatusNotFound || e.Kind != "not_found" || e.Message != "no environment applied yet; run fixpoint apply -f FILE" {
		t.Fatalf("before any apply: %d %+v", code, e)
	}

	ch := envCharm(t, n)
	if _, err := op.Deploy(ctxT(t), envDeploy(ch, 3)); err != nil {
		t.Fatal(err)
	}
	doc, err := op.Env(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	var envIndex uint64
	_ = n.store.View(func(st *model.State) error { envIndex = st.EnvIndex; return nil })
	db := doc.Env.Services["db"]
	if doc.Name != "docs" || doc.Revision != envIndex || db.Charm != "./charms/db" || *db.Units != 3 || doc.Charms[ch.Hash] == nil || doc.Charms[ch.Hash].Meta.Options["port"].Type != "int" {
		t.Fatalf("document = %+v", doc)
	}
	_ = n.store.View(func(st *model.State) error {
		if st.Document == nil || st.Document.Services["db"].Config["password"] != "pw-xyzzy-42" {
			t.Errorf("the deploy did not record its document: %+v", st.Document)
		}
		return nil
	})
	if data := mustJSON(t, doc); strings.Contains(string(data), "pw-xyzzy-42") {
		t.Fatalf("the document shows a secret value: %s", data)
	}
	_, _, body := call(t, http.MethodGet, n.addr+"/v1/env?reveal=1", operatorToken, nil)
	if !strings.Contains(string(body), "pw-xyzzy-42") {
		t.Fatalf("?reveal=1 for the operator: %s", body)
	}
	var wire map[string]json.RawMessage
	if err := json.Unmarshal(body, &wire); err != nil || len(wire) != 4 || wire["name"] == nil || wire["revision"] == nil || wire["env"] == nil || wire["charms"] == nil {
		t.Fatalf("the answer's fields: %s (%v)", body, err)
	}

	for _, tok := range []string{joinToken} {
		if code, e, _ := call(t, http.MethodGet, n.addr+"/v1/env", tok, nil); code != http.StatusForbidden {
			t.Errorf("join token: %d %v, want 403", code, e)
		}
	}
	agent := api.NewClient([]string{n.addr}, joinToken, nil)
	if err := agent.Register(ctxT(t), "m1", "10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	if _, err := agent.Env(ctxT(t)); !errors.Is(err, api.ErrForbidden) {
		t.Errorf("an agent reading the document: %v, want forbidden", err)
	}

	// Deployed back as read: no change, and the password kept. The
	// charm is not uploaded again.
	doc, err = op.Env(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := op.Plan(ctxT(t), editOf(doc))
	if err != nil || len(plan.Changes) != 0 || len(plan.Missing) != 0 {
		t.Fatalf("plan of the document: %+v, %v", plan, err)
	}
	resp, err := op.Deploy(ctxT(t), editOf(doc))
	if err != nil || len(resp.Changes) != 0 {
		t.Fatalf("deploy of the document: %+v, %v", resp, err)
	}
	_ = n.store.View(func(st *model.State) error {
		if got := st.Services["db"].Config["password"]; got != "pw-xyzzy-42" {
			t.Errorf("password after the round trip: %v", got)
		}
		return nil
	})

	// A second service of the same charm, by hash only.
	doc, err = op.Env(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	edit := editOf(doc)
	one := 1
	edit.Env.Services["db2"] = model.ServiceSpec{CharmHash: ch.Hash, Units: &one}
	if resp, err := op.Deploy(ctxT(t), edit); err != nil || len(resp.Changes) != 2 || resp.Changes[0].Kind != model.AddService {
		t.Fatalf("a service of a stored charm: %+v, %v", resp, err)
	}
}

// An edit planned against a revision the environment is no longer at is
// a 409 conflict, in words that say to read it again, and changes
// nothing.
func TestEditOfAMovedEnvironmentConflicts(t *testing.T) {
	n := startNode(t, "n1")
	op := api.NewClient([]string{n.addr}, operatorToken, nil)
	ch := envCharm(t, n)
	if _, err := op.Deploy(ctxT(t), envDeploy(ch, 1)); err != nil {
		t.Fatal(err)
	}
	stale, err := op.Env(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := op.Deploy(ctxT(t), envDeploy(ch, 2)); err != nil {
		t.Fatal(err)
	}
	now, err := op.Env(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	before := stateJSON(t, n)
	edit := editOf(stale)
	three := 3
	db := edit.Env.Services["db"]
	db.Units = &three
	edit.Env.Services["db"] = db
	want := fmt.Sprintf("environment moved: this change was planned against revision %d and the environment is at %d; read it again and retry", stale.Revision, now.Revision)
	_, err = op.Deploy(ctxT(t), edit)
	if !errors.Is(err, api.ErrConflict) || !errors.Is(err, api.ErrEnvMoved) || !strings.Contains(err.Error(), want) {
		t.Fatalf("deploy against a moved environment: %v, want conflict %q", err, want)
	}
	code, e, _ := call(t, http.MethodPost, n.addr+"/v1/deploy", operatorToken, mustJSON(t, edit))
	if code != http.StatusConflict || e.Kind != "conflict" || !strings.HasPrefix(e.Message, want) {
		t.Fatalf("raw: %d %+v", code, e)
	}
	if after := stateJSON(t, n); after != before {
		t.Fatal("a refused edit changed the state")
	}
	// Read again, it applies.
	edit = editOf(now)
	db = edit.Env.Services["db"]
	db.Units = &three
	edit.Env.Services["db"] = db
	if _, err := op.Deploy(ctxT(t), edit); err != nil {
		t.Fatal(err)
	}
}

// remove_units takes the units named; bad names are refused with the
// unit and the fix, and change nothing.
func TestRemoveUnitsByName(t *testing.T) {
	n := startNode(t, "n1")
	op := api.NewClient([]string{n.addr}, operatorToken, nil)
	ch := envCharm(t, n)
	if _, err := op.Deploy(ctxT(t), envDeploy(ch, 3)); err != nil {
		t.Fatal(err)
	}
	edit := func(units int, remove ...string) *model.Deploy {
		doc, err := op.Env(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		d := editOf(doc)
		db := d.Env.Services["db"]
		db.Units = &units
		d.Env.Services["db"] = db
		d.RemoveUnits = remove
		return d
	}
	before := stateJSON(t, n)
	for _, c := range []struct {
		d      *model.Deploy
		status int
		want   string
	}{
		{edit(2, "db/7"), http.StatusConflict, "unit db/7 does not exist in environment docs; see fixpoint status"},
		{edit(1, "db/1", "db/1"), http.StatusBadRequest, "remove_units names unit db/1 twice"},
		{edit(3, "db/1"), http.StatusConflict, "removing db/1 leaves 2 units, but the environment asks for 3"},
	} {
		code, e, _ := call(t, http.MethodPost, n.addr+"/v1/deploy", operatorToken, mustJSON(t, c.d))
		if code != c.status || !strings.Contains(e.Message, c.want) {
			t.Errorf("remove %v: %d %v, want %d %q", c.d.RemoveUnits, code, e, c.status, c.want)
		}
	}
	gone := edit(2, "db/1")
	delete(gone.Env.Services, "db")
	gone.Env.Services["db2"] = model.ServiceSpec{CharmHash: ch.Hash}
	if _, err := op.Deploy(ctxT(t), gone); !errors.Is(err, api.ErrRefused) || !strings.Contains(err.Error(), "unit db/1 belongs to service db, which this change removes") {
		t.Errorf("a unit of a service removed: %v", err)
	}
	if after := stateJSON(t, n); after != before {
		t.Fatalf("a refused removal changed the state:\n%s\n%s", before, after)
	}
	resp, err := op.Deploy(ctxT(t), edit(2, "db/1"))
	if err != nil || len(resp.Changes) != 1 || resp.Changes[0].Kind != model.RemoveUnits || strings.Join(resp.Changes[0].Units, " ") != "db/1" {
		t.Fatalf("remove db/1: %+v, %v", resp, err)
	}
	_ = n.store.View(func(st *model.State) error {
		for _, name := range []string{"db/0", "db/2"} {
			if u := st.Units[name]; u == nil || u.Life != model.Alive {
				t.Errorf("%s after db/1's removal: %+v", name, u)
			}
		}
		if u := st.Units["db/1"]; u != nil && u.Life == model.Alive {
			t.Error("db/1 is alive after its removal")
		}
		return nil
	})
	doc, err := op.Env(ctxT(t))
	if err != nil || *doc.Env.Services["db"].Units != 2 {
		t.Fatalf("document after the removal: %+v, %v", doc, err)
	}
}

// Through a follower: the document reads the same, an edit of it deploys
// (forwarded to the leader, with the record flag the follower sets), and
// an edit of a revision the environment left is a conflict.
func TestEnvEditThroughAFollower(t *testing.T) {
	leader, follower := cluster(t)
	lop := api.NewClient([]string{leader.addr}, operatorToken, nil)
	fop := api.NewClient([]string{follower.addr}, operatorToken, nil)
	ch := envCharm(t, leader)
	// The test nodes know no peers to fetch a charm from: each has it.
	envCharm(t, follower)
	if _, err := lop.Deploy(ctxT(t), envDeploy(ch, 1)); err != nil {
		t.Fatal(err)
	}
	doc, err := fop.Env(ctxT(t))
	if err != nil || doc.Name != "docs" || doc.Charms[ch.Hash] == nil {
		t.Fatalf("the document through the follower: %+v, %v", doc, err)
	}
	edit := editOf(doc)
	two := 2
	db := edit.Env.Services["db"]
	db.Units = &two
	edit.Env.Services["db"] = db
	if resp, err := fop.Deploy(ctxT(t), edit); err != nil || len(resp.Changes) != 1 || resp.Changes[0].Kind != model.AddUnits {
		t.Fatalf("an edit through the follower: %+v, %v", resp, err)
	}
	_ = leader.store.View(func(st *model.State) error {
		if st.Document == nil || *st.Document.Services["db"].Units != 2 {
			t.Errorf("the edit's document was not recorded: %+v", st.Document)
		}
		return nil
	})
	_, err = fop.Deploy(ctxT(t), edit)
	if !errors.Is(err, api.ErrEnvMoved) || !strings.Contains(err.Error(), "environment moved") {
		t.Fatalf("the same edit again: %v, want a conflict", err)
	}
}

// An environment deployed without its document (as a v0.3.0 server did)
// whose user secrets the state cannot say where to read: GET /v1/env
// names what is missing and how to fix it, and shows no value.
func TestEnvDocumentNamesWhatTheStateLacks(t *testing.T) {
	n := startNode(t, "n1")
	op := api.NewClient([]string{n.addr}, operatorToken, nil)
	ch := envCharm(t, n)
	d := envDeploy(ch, 1)
	d.Env.Secrets = map[string]model.UserSecretSpec{"db-pass": {Content: map[string]model.SecretSource{"password": {File: "./db.pass"}}}}
	err := n.store.View(func(st *model.State) (err error) {
		d.SecretRevisions, err = model.ReviseUserSecrets(st, &d.Env, map[string]map[string]string{"db-pass": {"password": "pw-sealed-xyzzy"}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.store.Apply(ctxT(t), &model.Command{Op: model.OpDeploy, Deploy: d}); err != nil {
		t.Fatal(err)
	}
	_, err = op.Env(ctxT(t))
	if !errors.Is(err, api.ErrRefused) || !strings.Contains(err.Error(), "secrets.db-pass.content") || !strings.Contains(err.Error(), "fixpoint apply -f FILE") || strings.Contains(err.Error(), "xyzzy") {
		t.Fatalf("the document of an environment with user secrets, never recorded: %v", err)
	}
}
