package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/raftstore/keyring"
)

// soloEnv is db alone, with n units.
func soloEnv(n int) *Environment {
	return &Environment{APIVersion: APIVersion, Name: "shop", Services: map[string]ServiceSpec{
		"db": {Charm: "./db", CharmHash: "h-db", Units: intp(n)},
	}}
}

// placedState is a state with one registered machine, so that units are
// placed and a dying one waits for its last run.
func placedState(t *testing.T) *State {
	t.Helper()
	s := NewState()
	applyTo(t, s, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "m0", Address: "10.0.0.1"}})
	return s
}

// ran runs every alive unit once, so that one made dying waits for its
// last run (a unit that never ran goes at once).
func ran(t *testing.T, s *State) {
	t.Helper()
	var rs []Result
	for _, name := range s.SortedUnits() {
		if s.Units[name].Seen == nil {
			rs = append(rs, Result{Unit: name, Hash: "h-first", Seen: &Seen{Life: Alive}})
		}
	}
	applyTo(t, s, &Command{Op: OpResults, Results: rs})
}

// finish runs the last reconcile of every dying unit, which removes it,
// and settles.
func finish(t *testing.T, s *State) {
	t.Helper()
	var rs []Result
	for _, name := range s.SortedUnits() {
		if s.Units[name].Life == Dying {
			rs = append(rs, Result{Unit: name, Hash: "h-last", Seen: &Seen{Life: Dying}})
		}
	}
	if len(rs) > 0 {
		applyTo(t, s, &Command{Op: OpResults, Results: rs})
	}
}

func aliveNames(s *State, svc string) string {
	var out []string
	for _, u := range s.UnitsOf(svc) {
		if u.Life == Alive {
			out = append(out, u.Name)
		}
	}
	return strings.Join(out, " ")
}

func TestRemoveUnitsTakesTheNamedUnit(t *testing.T) {
	s := placedState(t)
	apply(t, s, 2, deployCmd(soloEnv(3)))
	ran(t, s)
	c := deployCmd(soloEnv(2))
	c.Deploy.RemoveUnits = []string{"db/1"}
	resp := apply(t, s, 4, c)
	if got := kinds(resp.Changes); got != "- units db/1 (go dying)" {
		t.Fatalf("changes:\n%s", got)
	}
	if s.Units["db/1"].Life != Dying || aliveNames(s, "db") != "db/0 db/2" {
		t.Fatalf("alive %q, db/1 %s", aliveNames(s, "db"), s.Units["db/1"].Life)
	}
}

// Unit numbers are never reused: not after a named removal, not after the
// service is removed and deployed again.
func TestUnitNumbersNeverReusedAfterNamedRemoval(t *testing.T) {
	s := placedState(t)
	applyTo(t, s, deployCmd(soloEnv(3)))
	ran(t, s)
	c := deployCmd(soloEnv(2))
	c.Deploy.RemoveUnits = []string{"db/2"}
	applyTo(t, s, c)
	finish(t, s)
	if _, ok := s.Units["db/2"]; ok {
		t.Fatal("db/2 was not removed by its last run")
	}
	applyTo(t, s, deployCmd(soloEnv(3)))
	if got := aliveNames(s, "db"); got != "db/0 db/1 db/3" {
		t.Fatalf("after adding one: %s", got)
	}
	ran(t, s)
	applyTo(t, s, deployCmd(&Environment{APIVersion: APIVersion, Name: "shop"}))
	finish(t, s)
	if _, ok := s.Services["db"]; ok {
		t.Fatal("service db is still there after its units went")
	}
	applyTo(t, s, deployCmd(soloEnv(1)))
	if got := aliveNames(s, "db"); got != "db/4" {
		t.Fatalf("db deployed again: %s", got)
	}
}

func TestRemoveUnitsRefusals(t *testing.T) {
	s := placedState(t)
	e := env(map[string][]string{"web-db": {"web:db", "db:db"}})
	apply(t, s, 2, deployCmd(e))
	ran(t, s)
	kill := deployCmd(soloEnv(1))
	kill.Deploy.Env.Services["web"] = e.Services["web"]
	kill.Deploy.Env.Relations = e.Relations
	kill.Deploy.RemoveUnits = []string{"db/0"}
	apply(t, s, 4, kill)
	before, _ := json.Marshal(s)
	for name, c := range map[string]struct {
		units  int
		remove []string
		drop   bool
		want   string
	}{
		"unknown":       {1, []string{"db/7"}, false, "unit db/7 does not exist in environment shop; see fixpoint status"},
		"removed svc":   {1, []string{"web/0"}, true, "unit web/0 belongs to service web, which this change removes"},
		"already dying": {1, []string{"db/0"}, false, "unit db/0 is already dying"},
		"wrong count":   {1, []string{"db/1"}, false, "service db: removing db/1 leaves 0 units, but the environment asks for 1; set services.db.units to 0"},
		"duplicate":     {0, []string{"db/1", "db/1"}, false, "remove_units names unit db/1 twice"},
		"not a unit":    {0, []string{"db"}, false, "not written service/N"},
	} {
		t.Run(name, func(t *testing.T) {
			next := env(map[string][]string{"web-db": {"web:db", "db:db"}})
			next.Services["db"] = ServiceSpec{Charm: "./db", CharmHash: "h-db", Units: intp(c.units)}
			if c.drop {
				delete(next.Services, "web")
				next.Relations = nil
			}
			cmd := deployCmd(next)
			cmd.Deploy.RemoveUnits = c.remove
			desired, err := cmd.Check()
			if err == nil {
				_, err = s.Admit(cmd, desired)
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("admit = %v, want %q", err, c.want)
			}
			if _, err := s.Apply(5, cmd); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("apply = %v, want %q", err, c.want)
			}
			s.Index = 4
			after, _ := json.Marshal(s)
			if string(after) != string(before) {
				t.Fatal("a refused removal changed the state")
			}
		})
	}
}

func TestMovedEnvironmentIsRefused(t *testing.T) {
	s := NewState()
	apply(t, s, 1, deployCmd(env(nil)))
	c := deployCmd(env(nil))
	c.Deploy.BaseIndex = 7
	desired, err := c.Check()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Admit(c, desired); !errors.Is(err, ErrEnvMoved) {
		t.Fatalf("admit = %v; a moved environment is refused before proposal", err)
	}
	_, err = s.Apply(2, c)
	if !errors.Is(err, ErrEnvMoved) || !strings.Contains(err.Error(), "environment moved: this change was planned against revision 7 and the environment is at 1; read it again and retry") {
		t.Fatalf("err = %v", err)
	}
	c.Deploy.BaseIndex = 1
	apply(t, s, 3, c)
}

func TestDocumentKeptOnlyWhenRecorded(t *testing.T) {
	s := NewState()
	if _, err := s.EnvDocument(); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "no environment applied yet; run fixpoint apply -f FILE") {
		t.Fatalf("before any deploy: %v", err)
	}
	apply(t, s, 1, deployCmd(env(nil)))
	if s.Document != nil {
		t.Fatal("a deploy that does not ask kept the document")
	}
	e := env(map[string][]string{"shop-db": {"web", "db"}})
	c := deployCmd(e)
	c.Deploy.Record = true
	apply(t, s, 2, c)
	got, _ := json.Marshal(s.Document)
	want, _ := json.Marshal(e)
	if string(got) != string(want) {
		t.Fatalf("document\n%s\nwant\n%s", got, want)
	}
	// A deploy without the flag keeps the document true to the state.
	apply(t, s, 3, deployCmd(env(nil)))
	if s.Document == nil || len(s.Document.Relations) != 0 || *s.Document.Services["db"].Units != 2 {
		t.Fatalf("document after an unrecorded deploy: %+v", s.Document)
	}
}

// richEnv uses what a synthesized document must carry: config other than
// defaults, placement, a subordinate, relations, and units.
func richEnv() *Environment {
	e := env(map[string][]string{"front": {"web:db", "db:db"}, "logging": {"log:host", "web:juju-info"}})
	db := e.Services["db"]
	db.Config = map[string]any{"max_connections": 7, "mode": "fast"}
	db.Placement = []string{"m1", "m2"}
	e.Services["db"] = db
	e.Services["log"] = ServiceSpec{Charm: "./log", CharmHash: "h-log"}
	return e
}

// The document made from the state deploys back as no change, and so
// does the document a recorded deploy kept: a round trip changes the
// state only as a no-op apply does.
func TestDocumentRoundTrip(t *testing.T) {
	for _, recorded := range []bool{false, true} {
		a, b := NewState(), NewState()
		first := deployCmd(richEnv())
		first.Deploy.Record = recorded
		apply(t, a, 1, first)
		apply(t, b, 1, first)
		doc, err := b.EnvDocument()
		if err != nil {
			t.Fatal(err)
		}
		if !recorded && (doc.Services["log"].Units != nil || doc.Services["db"].Config["mode"] != nil || doc.Relations["db-web"] == nil) {
			t.Fatalf("synthesized document: %+v", doc)
		}
		again := deployCmd(richEnv())
		again.Deploy.Record = true
		back := &Command{Op: OpDeploy, Deploy: &Deploy{Env: *doc, Charms: charms(), BaseIndex: b.EnvIndex, Record: true}}
		desired, err := back.Check()
		if err != nil {
			t.Fatal(err)
		}
		if changes := Plan(b, desired); len(changes) != 0 {
			t.Fatalf("recorded=%v: the document plans\n%s", recorded, kinds(changes))
		}
		apply(t, a, 2, again)
		resp := apply(t, b, 2, back)
		if len(resp.Changes) != 0 {
			t.Fatalf("changes %v", resp.Changes)
		}
		a.Document, b.Document = nil, nil
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Fatalf("recorded=%v: the round trip changed the state otherwise than a no-op apply:\n%s\n%s", recorded, ja, jb)
		}
	}
}

// A state that holds user secrets cannot say where their values are
// read: its document is not made, and the error names what is missing.
func TestSynthesizedDocumentNamesItsGaps(t *testing.T) {
	kr, err := keyring.NewMemoryKeyring()
	if err != nil {
		t.Fatal(err)
	}
	s := NewState()
	s.SetSealer(kr)
	values := map[string]map[string]string{"db-pass": {"password": "pw-xyzzy", "username": "admin"}}
	apply(t, s, 1, deploySecrets(t, s, secretEnv(), values))
	_, err = s.EnvDocument()
	var gaps *DocumentGapsError
	if !errors.As(err, &gaps) || len(gaps.Gaps) != 1 || !strings.Contains(err.Error(), "secrets.db-pass.content") || strings.Contains(err.Error(), "pw-xyzzy") {
		t.Fatalf("err = %v", err)
	}
	s.AdoptDocument()
	if s.Document != nil {
		t.Fatal("a document with gaps was adopted")
	}
	// Recorded, it deploys back without the values: the secret keeps its
	// revision.
	c := deploySecrets(t, s, secretEnv(), values)
	c.Deploy.Record = true
	apply(t, s, 2, c)
	doc, err := s.EnvDocument()
	if err != nil {
		t.Fatal(err)
	}
	revs, err := ReviseUserSecrets(s, doc, nil)
	if err != nil || len(revs) != 0 {
		t.Fatalf("no values for a held secret: %v, %v", revs, err)
	}
	changed := *doc
	changed.Secrets = map[string]UserSecretSpec{"db-pass": {Content: map[string]SecretSource{"password": {File: "p"}}, Grant: []string{"web"}}}
	if _, err := ReviseUserSecrets(s, &changed, nil); err == nil || !strings.Contains(err.Error(), "its keys change") {
		t.Fatalf("keys changed without values: %v", err)
	}
}

func TestRedactDocumentAndUnredact(t *testing.T) {
	cs := secretCharms()
	e := env(nil)
	web := e.Services["web"]
	web.Config = map[string]any{"dbpass": "pw-plain-xyzzy"}
	e.Services["web"] = web
	s := NewState()
	apply(t, s, 1, &Command{Op: OpDeploy, Deploy: &Deploy{Env: *e, Charms: cs, Record: true}})
	red := RedactDocument(s.Document, cs)
	data, _ := json.Marshal(red)
	if strings.Contains(string(data), "pw-plain-xyzzy") || s.Document.Services["web"].Config["dbpass"] != "pw-plain-xyzzy" {
		t.Fatalf("redacted %s; document %v", data, s.Document.Services["web"].Config)
	}
	if data, _ := json.Marshal(s.Redacted()); strings.Contains(string(data), "pw-plain-xyzzy") || s.Document.Services["web"].Config["dbpass"] != "pw-plain-xyzzy" {
		t.Fatalf("the redacted state shows the document's secret value, or redacting it changed the state: %s", data)
	}
	var back Environment
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	s.Unredact(&back, cs)
	if back.Services["web"].Config["dbpass"] != "pw-plain-xyzzy" {
		t.Fatalf("unredacted %v", back.Services["web"].Config)
	}
	// A redaction that matches no value the service has is refused, never
	// deployed as the value.
	stray := back
	stray.Services = map[string]ServiceSpec{"web": {CharmHash: "h-web", Config: map[string]any{"dbpass": Redact("another")}}, "db": back.Services["db"]}
	if _, err := Resolve(&stray, cs); err == nil || !strings.Contains(err.Error(), "holds a redacted value") {
		t.Fatalf("a stray redaction: %v", err)
	}
	// A reference says where a value is read: it is shown as written.
	ref := secretEnv()
	if got := RedactDocument(ref, cs).Services["web"].Config["dbpass"]; got != "secret:db-pass" {
		t.Fatalf("reference shown as %v", got)
	}
}

// A subordinate unit goes with its principal or its relation, never by
// name.
func TestRemoveUnitsRefusesASubordinate(t *testing.T) {
	s := placedState(t)
	e := richEnv()
	apply(t, s, 2, deployCmd(e))
	var sub string
	for _, u := range s.UnitsOf("log") {
		sub = u.Name
	}
	if sub == "" {
		t.Fatal("no subordinate unit to remove")
	}
	c := deployCmd(e)
	c.Deploy.RemoveUnits = []string{sub}
	if _, err := s.Apply(3, c); err == nil || !strings.Contains(err.Error(), "unit "+sub+" is subordinate") {
		t.Fatalf("removing %s: %v", sub, err)
	}
}

// A deploy retried across a raise of the cluster's level, which sets its
// record flag, asks what its first send asked: it is a duplicate, not a
// request id reused for another command.
func TestRecordFlagIsNotPartOfTheRequest(t *testing.T) {
	s := NewState()
	first := deployCmd(env(nil))
	first.RequestID = "req-1"
	first.Digest = first.Fingerprint()
	apply(t, s, 1, first)
	retry := deployCmd(env(nil))
	retry.RequestID, retry.Deploy.Record = "req-1", true
	retry.Digest = retry.Fingerprint()
	if resp := apply(t, s, 2, retry); !resp.Duplicate || resp.Index != 1 {
		t.Fatalf("the retry: %+v", resp)
	}
}

// Clients that each read the document, add their own service and deploy
// it back against the revision read, retrying on ErrEnvMoved, never lose
// an edit, however their steps interleave.
func TestConcurrentEditsNeverLoseOne(t *testing.T) {
	const clients = 4
	moved := 0
	for seed := int64(1); seed <= 50; seed++ {
		r := rand.New(rand.NewSource(seed))
		s := NewState()
		first := deployCmd(soloEnv(1))
		first.Deploy.Record = true
		apply(t, s, 1, first)
		idx := uint64(2)
		type client struct {
			doc  *Environment
			rev  uint64
			done bool
		}
		cs := make([]client, clients)
		for left := clients; left > 0; {
			i := r.Intn(clients)
			c := &cs[i]
			switch {
			case c.done:
				continue
			case c.doc == nil:
				c.doc, c.rev = cloneEnvironment(s.Document), s.EnvIndex
				continue
			}
			c.doc.Services[fmt.Sprintf("c%d", i)] = ServiceSpec{Charm: "./cache", CharmHash: "h-cache"}
			cmd := &Command{Op: OpDeploy, Deploy: &Deploy{Env: *c.doc, Charms: charms(), BaseIndex: c.rev, Record: true}}
			_, err := s.Apply(idx, cmd)
			idx++
			switch {
			case errors.Is(err, ErrEnvMoved):
				c.doc = nil
				moved++
			case err != nil:
				t.Fatalf("seed %d: client %d: %v", seed, i, err)
			default:
				c.done = true
				left--
			}
		}
		for i := range clients {
			name := fmt.Sprintf("c%d", i)
			if _, ok := s.Document.Services[name]; !ok || s.Services[name] == nil {
				t.Fatalf("seed %d: the edit of client %d was lost", seed, i)
			}
		}
	}
	if moved == 0 {
		t.Fatal("no interleaving made an edit meet a moved environment")
	}
}
