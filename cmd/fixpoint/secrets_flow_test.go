package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine/api"
)

// canonical/operator's test_secrets flow (test/integration/test_secrets.py),
// re-expressed against fixpoint: every step is `fixpoint run` of an action
// of testdata/ops/ops-secrets, and the assertions read the action's
// results and what the units' hooks recorded (the seen action).

// The credential's revisions as the charm sets them (CREDENTIALS in its
// charm.py): they reach the consumer's hooks, and no file of the control
// plane in the clear; results show them as credentialDigest.
var secretValues = []string{"owner-value-v1-5d1e", "owner-value-v2-8a2c"}

// credentialDigest is what the charm's results show of a credential.
func credentialDigest(v string) string {
	sum := sha256.Sum256([]byte(v))
	return "sha256:" + hex.EncodeToString(sum[:])[:16]
}

// metaExpires is the expiry add-with-meta sets (EXPIRE in charm.py), as
// ops' get_info gives it back.
const metaExpires = "2030-01-02T03:04:05+00:00"

// metaExpiresUTC is that expiry as the operator's view shows it.
const metaExpiresUTC = "2030-01-02T03:04:05Z"

// secretsEnv writes the environment: the owner (two units) and the
// consumer, related over share/use.
func secretsEnv(t *testing.T, dir, charm string) string {
	t.Helper()
	env := fmt.Sprintf(`apiVersion: "fixpoint/v1"
name: "secretshop"
services: {
	"sec-owner": {charm: %q, units: 2}
	"sec-user": {charm: %q, units: 1}
}
relations: "shared": ["sec-owner:share", "sec-user:use"]
`, charm, charm)
	path := filepath.Join(dir, "secrets.cue")
	if err := os.WriteFile(path, []byte(env), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// secretSnap is test_secrets' snapshot: tracked and latest content, and
// the owner's get_info (a field that is None left out).
type secretSnap struct {
	Tracked map[string]string `json:"tracked"`
	Latest  map[string]string `json:"latest"`
	Info    map[string]string `json:"info"`
}

// secretResults are the results of the charm's actions.
type secretResults struct {
	SecretID string            `json:"secretid"`
	Before   *secretSnap       `json:"before"`
	After    *secretSnap       `json:"after"`
	Content  map[string]string `json:"content"`
	Info     map[string]string `json:"info"`
	Relation string            `json:"relation"`
}

// seenEntry is one observation of a unit's secret hooks.
type seenEntry struct {
	Hook     string            `json:"hook"`
	ID       string            `json:"id"`
	Label    string            `json:"label"`
	Revision string            `json:"revision"`
	Tracked  map[string]string `json:"tracked"`
	Latest   map[string]string `json:"latest"`
}

// secretsFlow is test_secrets' flow driven through cli (run): the owner
// is sec-owner (two units), the consumer sec-user/0.
type secretsFlow struct {
	t   *testing.T
	cli opCLI
	// leader and follower are the owner's units.
	leader, follower string
}

// act runs action on unit and decodes its results; the action must
// complete.
func (f *secretsFlow) act(unit, action string, params ...string) secretResults {
	f.t.Helper()
	op, _ := runOp(f.t, f.cli, 0, append([]string{"run", unit, action}, params...)...)
	if op.Status != "completed" {
		f.t.Fatalf("%s %s %v: %+v", unit, action, params, op)
	}
	var out secretResults
	decodeResults(f.t, op.Results, &out)
	out.SecretID = canonicalID(out.SecretID)
	return out
}

// decodeResults reads an operation's results into out.
func decodeResults(t *testing.T, results map[string]any, out any) {
	t.Helper()
	b, err := json.Marshal(results)
	if err == nil {
		err = json.Unmarshal(b, out)
	}
	if err != nil {
		t.Fatalf("results %v: %v", results, err)
	}
}

// seen is what unit's secret hooks recorded, oldest first.
func (f *secretsFlow) seen(unit string) []seenEntry {
	f.t.Helper()
	op, _ := runOp(f.t, f.cli, 0, "run", unit, "seen")
	var res struct {
		Count int                  `json:"count,string"`
		Seen  map[string]seenEntry `json:"seen"`
	}
	decodeResults(f.t, op.Results, &res)
	out := make([]seenEntry, res.Count)
	for i := range out {
		e, ok := res.Seen[fmt.Sprint(i)]
		if !ok {
			f.t.Fatalf("%s's seen lacks entry %d of %d: %v", unit, i, res.Count, op.Results)
		}
		e.ID = canonicalID(e.ID)
		out[i] = e
	}
	return out
}

// converge waits for the fixed point: the hooks that follow an action
// (secret-changed, secret-remove, relation hooks) have run.
func (f *secretsFlow) converge() {
	f.t.Helper()
	if r := f.cli("wait", "--timeout", "5m"); r.code != 0 {
		f.t.Fatalf("wait exited %d: %s%s\nlogs:\n%s\nevents:\n%s", r.code, r.stdout, r.stderr, f.cli("logs", "sec-owner").stdout, f.cli("events").stdout)
	}
}

// showSecret reads the operator's view of secret id, with its revisions.
func (f *secretsFlow) showSecret(id string) api.SecretInfo {
	f.t.Helper()
	r := f.cli("show-secret", id, "--revisions", "-o", "json")
	var s api.SecretInfo
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &s) != nil {
		all := f.cli("secrets", "-o", "json")
		f.t.Fatalf("show-secret %s exited %d: %s%s\nsecrets lists:\n%s", id, r.code, r.stdout, r.stderr, all.stdout)
	}
	return s
}

func revisionsOf(s api.SecretInfo) []int {
	var out []int
	for _, r := range s.Revisions {
		out = append(out, r.Revision)
	}
	return out
}

// canonicalInfo is get_info's fields with its id as the actions'
// secretid: ops gives get_info's id as secret://MODEL-UUID/ID, the form
// Juju's secret-info-get keys are canonicalised to, and the id of a
// secret it just added as secret:ID.
func canonicalInfo(info map[string]string) map[string]string {
	if info == nil {
		return nil
	}
	out := maps.Clone(info)
	if id, ok := out["id"]; ok {
		out["id"] = canonicalID(id)
	}
	return out
}

// canonicalID is a secret URI as secret:ID.
func canonicalID(id string) string {
	if strings.HasPrefix(id, "secret://") {
		return "secret:" + id[strings.LastIndex(id, "/")+1:]
	}
	return id
}

// expectSnap checks a snapshot field by field.
func (f *secretsFlow) expectSnap(what string, got *secretSnap, content map[string]string, info map[string]string) {
	f.t.Helper()
	if got == nil {
		f.t.Errorf("%s: no snapshot", what)
		return
	}
	if !reflect.DeepEqual(got.Tracked, content) || !reflect.DeepEqual(got.Latest, content) || !reflect.DeepEqual(canonicalInfo(got.Info), info) {
		f.t.Errorf("%s: snapshot %+v\nwant content %v, info %v", what, *got, content, info)
	}
}

// run drives the whole flow and returns the credential's id. middle runs
// between the owner's new revision of the credential and the consumer's
// refresh (a leader change, on a cluster).
func (f *secretsFlow) run(middle func()) string {
	t := f.t
	t.Helper()
	foo := map[string]string{"foo": "bar"}

	// add-secret, on the owner's leader: revision 1, {foo: bar}.
	op, _ := runOp(t, f.cli, 0, "run", "sec-owner/leader", "add-secret")
	f.leader, f.follower = op.Unit, "sec-owner/0"
	if f.leader == f.follower {
		f.follower = "sec-owner/1"
	}
	var added secretResults
	decodeResults(t, op.Results, &added)
	added.SecretID = canonicalID(added.SecretID)
	if !strings.HasPrefix(added.SecretID, "secret:") {
		t.Fatalf("add-secret: secret id %q", added.SecretID)
	}
	// show-operation gives the operation as run printed it.
	if shown := showOp(t, f.cli, op.ID, ""); shown.Status != "completed" || !reflect.DeepEqual(shown.Results, op.Results) {
		t.Errorf("show-operation %d: %+v; run printed %+v", op.ID, shown, op)
	}
	f.expectSnap("add-secret", added.After, foo, map[string]string{"id": added.SecretID, "revision": "1"})
	// A unit's own secret, on the other unit; an application's secret
	// needs the leader.
	unitOwned := f.act(f.follower, "add-secret", "owner=unit")
	f.expectSnap("add-secret owner=unit", unitOwned.After, foo, map[string]string{"id": unitOwned.SecretID, "revision": "1"})
	if s := f.showSecret(unitOwned.SecretID); s.Owner != "unit "+f.follower {
		t.Errorf("the unit's secret is owned by %q", s.Owner)
	}
	if op, _ := runOp(t, f.cli, 1, "run", f.follower, "add-secret"); op.Status != "failed" || !strings.Contains(fmt.Sprint(op.Results["stderr"]), "this unit is not the leader") {
		t.Errorf("add-secret of the application on a follower: %+v", op)
	}
	f.act(f.leader, "remove-secret", "secretid="+added.SecretID)
	f.act(f.follower, "remove-secret", "secretid="+unitOwned.SecretID)

	// add-with-meta, every combination of label, description, expire and
	// rotate; each removed after (remove_all_revisions), as test_secrets'
	// cleanup does, since a label is unique to its owner.
	meta := map[string][2]string{"label": {"label", "label1"}, "description": {"description", "description1"}, "expire": {"expires", metaExpires}, "rotate": {"rotation", "daily"}}
	fields := []string{"label", "description", "expire", "rotate"}
	for mask := 0; mask < 1<<len(fields); mask++ {
		var set []string
		for i, fl := range fields {
			if mask&(1<<i) != 0 {
				set = append(set, fl)
			}
		}
		res := f.act(f.leader, "add-with-meta", "fields="+strings.Join(set, ","))
		info := map[string]string{"id": res.SecretID, "revision": "1"}
		for _, fl := range set {
			info[meta[fl][0]] = meta[fl][1]
		}
		f.expectSnap("add-with-meta "+strings.Join(set, ","), res.After, foo, info)
		s := f.showSecret(res.SecretID)
		want := api.SecretInfo{ID: res.SecretID, Owner: "application sec-owner", Label: info["label"], Description: info["description"], Rotate: info["rotation"], Revision: 1}
		if slices.Contains(set, "expire") {
			want.Expire = metaExpiresUTC
		}
		// A daily rotation is next due a day on: after now, whatever
		// the clock.
		if next, err := time.Parse(time.RFC3339, s.NextRotate); slices.Contains(set, "rotate") != (err == nil && next.After(time.Now())) {
			t.Errorf("add-with-meta %v: next rotation %q", set, s.NextRotate)
		}
		// The control plane recorded when the secret was made.
		if made, err := time.Parse(time.RFC3339, s.Created); err != nil || time.Since(made) > time.Hour || s.Updated != s.Created {
			t.Errorf("add-with-meta %v: created %q, updated %q", set, s.Created, s.Updated)
		}
		if s.Revisions, s.NextRotate, s.Created, s.Updated = nil, "", "", ""; !reflect.DeepEqual(s, want) {
			t.Errorf("add-with-meta %v: the operator sees %+v", set, s)
		}
		f.act(f.leader, "remove-secret", "secretid="+res.SecretID)
	}
	f.setFlows()
	id := f.credential(middle)

	// What is left: the four secrets of the set flows and the
	// credential; every secret removed is gone.
	r := f.cli("secrets", "-o", "json")
	var list []api.SecretInfo
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &list) != nil {
		t.Fatalf("secrets exited %d: %s%s", r.code, r.stdout, r.stderr)
	}
	if len(list) != 5 || !slices.ContainsFunc(list, func(s api.SecretInfo) bool { return s.ID == id }) {
		t.Errorf("secrets lists %d: %+v; want the set flows' four and the credential", len(list), list)
	}
	return id
}

// setFlows runs set-secret-flow as test_secrets does, by id and by label;
// the owner's leader then removes each revision 1 (no consumer tracks it).
func (f *secretsFlow) setFlows() {
	t := f.t
	t.Helper()
	type flow struct {
		steps   string
		byLabel bool
		// What the secret is after the flow.
		content map[string]string
		info    map[string]string
	}
	flows := []flow{
		{"content,description,content,description", false, map[string]string{"val": "2"}, map[string]string{"revision": "2", "description": "description2"}},
		{"rotate,content,rotate,content,rotate", false, map[string]string{"val": "2"}, map[string]string{"revision": "2", "rotation": "weekly"}},
		{"label,content,label,content", true, map[string]string{"val": "2"}, map[string]string{"revision": "2", "label": "label2"}},
		{"expire,description,expire", false, map[string]string{"foo": "bar"}, map[string]string{"revision": "1", "description": "description1", "expires": "2032-01-02T03:04:05+00:00"}},
	}
	removedFrom := map[string]string{} // id: its label
	for _, fl := range flows {
		lookup := "secretlabel=label1"
		if fl.byLabel {
			f.act(f.leader, "add-with-meta", "fields=label")
		} else {
			lookup = "secretid=" + f.act(f.leader, "add-secret").SecretID
		}
		res := f.act(f.leader, "set-secret-flow", lookup, "flow="+fl.steps)
		before := map[string]string{"id": res.SecretID, "revision": "1"}
		if fl.byLabel {
			before["label"] = "label1"
		}
		f.expectSnap(fl.steps+" before", res.Before, map[string]string{"foo": "bar"}, before)
		fl.info["id"] = res.SecretID
		f.expectSnap(fl.steps+" after", res.After, fl.content, fl.info)
		// What the next hook reads: the flow's changes, kept.
		got := f.act(f.leader, "get-secret", "secretid="+res.SecretID)
		if !reflect.DeepEqual(got.Content, fl.content) || !reflect.DeepEqual(canonicalInfo(got.Info), fl.info) {
			t.Errorf("%s: get-secret after the flow: %+v; want %v %v", fl.steps, got, fl.content, fl.info)
		}
		if fl.info["revision"] == "2" {
			removedFrom[res.SecretID] = fl.info["label"]
		}
	}
	f.converge()
	for _, e := range f.seen(f.leader) {
		if label, ok := removedFrom[e.ID]; ok && e.Hook == "secret-remove" && e.Revision == "1" && e.Label == label {
			delete(removedFrom, e.ID)
		}
	}
	if len(removedFrom) != 0 {
		t.Errorf("set-secret-flow: the owner's leader got no secret-remove of revision 1 of %v; it saw %+v", removedFrom, f.seen(f.leader))
	}
	for id := range removedFrom {
		if s := f.showSecret(id); !reflect.DeepEqual(revisionsOf(s), []int{2}) {
			t.Errorf("set-secret-flow: %s keeps revisions %v", id, revisionsOf(s))
		}
	}
}

// credential shares the credential with the consumer and follows it
// through a new revision: secret-changed on the consumer, which keeps
// its revision until it refreshes; then secret-remove of the old one on
// the owner. A revoke ends the consumer's access.
func (f *secretsFlow) credential(middle func()) string {
	t := f.t
	t.Helper()
	v1 := map[string]string{"password": credentialDigest(secretValues[0])}
	v2 := map[string]string{"password": credentialDigest(secretValues[1])}
	cred := f.act(f.leader, "add-credential")
	id := cred.SecretID
	f.expectSnap("add-credential", cred.After, v1, map[string]string{"id": id, "revision": "1", "label": "shared", "description": "the credential"})
	if sh := f.act(f.leader, "share", "secretlabel=shared"); sh.SecretID != id || sh.Relation == "" {
		t.Errorf("share: %+v", sh)
	}
	f.converge()
	user := "sec-user/0"
	if seen := f.seen(user); len(seen) == 0 || seen[0].Hook != "use-relation-changed" || seen[0].ID != id || !reflect.DeepEqual(seen[0].Tracked, v1) {
		t.Fatalf("share: the consumer saw %+v", seen)
	}
	if got := f.act(user, "get-secret", "secretlabel=from-owner"); !reflect.DeepEqual(got.Content, v1) || got.Info != nil {
		t.Errorf("share: the consumer's get-secret: %+v", got)
	}
	s := f.showSecret(id)
	if len(s.Grants) != 1 || s.Grants[0].To != "sec-user" || len(s.Consumers) != 1 || s.Consumers[0] != (api.SecretConsumerInfo{Unit: user, Label: "from-owner", Tracked: 1}) {
		t.Errorf("share: the operator sees %+v", s)
	}

	// The set flow: a new revision; the consumer sees secret-changed
	// while it tracks revision 1, so the owner keeps revision 1.
	set := f.act(f.leader, "set-secret-flow", "secretlabel=shared", "flow=content", "credential=true")
	f.expectSnap("set the credential", set.After, v2, map[string]string{"id": id, "revision": "2", "label": "shared", "description": "the credential"})
	f.converge()
	changed := f.seen(user)
	if last := changed[len(changed)-1]; !reflect.DeepEqual(last, seenEntry{Hook: "secret-changed", ID: id, Label: "from-owner", Tracked: v1, Latest: v2}) {
		t.Errorf("set: the consumer's last observation %+v; want secret-changed tracking revision 1, peeking 2", last)
	}
	if s := f.showSecret(id); !reflect.DeepEqual(revisionsOf(s), []int{1, 2}) || len(s.Consumers) != 1 || s.Consumers[0].Tracked != 1 {
		t.Errorf("set: while the consumer tracks revision 1, the operator sees %+v", s)
	}

	if middle != nil {
		middle()
	}

	// The consumer peeks (still tracking 1), then refreshes: revision 1
	// is nobody's now, and the owner's leader removes it.
	if got := f.act(user, "get-secret", "secretlabel=from-owner", "mode=peek"); !reflect.DeepEqual(got.Content, v2) {
		t.Errorf("peek: %+v", got)
	}
	if got := f.act(user, "get-secret", "secretlabel=from-owner"); !reflect.DeepEqual(got.Content, v1) {
		t.Errorf("after a peek the consumer reads %+v; want revision 1 still", got)
	}
	if got := f.act(user, "get-secret", "secretlabel=from-owner", "mode=refresh"); !reflect.DeepEqual(got.Content, v2) {
		t.Errorf("refresh: %+v", got)
	}
	f.converge()
	removed := false
	for _, e := range f.seen(f.leader) {
		removed = removed || reflect.DeepEqual(e, seenEntry{Hook: "secret-remove", ID: id, Label: "shared", Revision: "1"})
	}
	if !removed {
		t.Errorf("refresh: the owner's leader got no secret-remove of the credential's revision 1; it saw %+v", f.seen(f.leader))
	}
	if s := f.showSecret(id); !reflect.DeepEqual(revisionsOf(s), []int{2}) || len(s.Consumers) != 1 || s.Consumers[0].Tracked != 2 {
		t.Errorf("refresh: the operator sees %+v", s)
	}
	if got := f.act(user, "get-secret", "secretlabel=from-owner"); !reflect.DeepEqual(got.Content, v2) {
		t.Errorf("after the refresh the consumer reads %+v", got)
	}

	// Revoke: the consumer no longer finds it.
	f.act(f.leader, "revoke", "secretlabel=shared")
	f.converge()
	if op, _ := runOp(t, f.cli, 1, "run", user, "get-secret", "secretlabel=from-owner"); op.Status != "failed" || op.Message != "secret not found" {
		t.Errorf("the consumer's get-secret after the revoke: %+v", op)
	}
	if s := f.showSecret(id); len(s.Grants) != 0 {
		t.Errorf("revoke: the operator sees grants %+v", s.Grants)
	}
	return id
}
