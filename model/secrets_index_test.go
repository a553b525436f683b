package model

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// scanAudience is the oracle of the secret index: a scan of every secret
// for who it is indexed under (its owner and grantees).
func scanAudience(st *State) map[string][]string {
	out := map[string][]string{}
	for id, s := range st.Secrets {
		who := map[string]bool{}
		if s.Owner != "" {
			who[s.Owner] = true
		}
		for g := range s.Grants {
			who[g] = true
		}
		for w := range who {
			out[w] = append(out[w], id)
		}
	}
	for _, ids := range out {
		sort.Strings(ids)
	}
	return out
}

// scanVisible is the oracle of VisibleSecrets: every secret, in id
// order, that SecretSees lets unit read.
func scanVisible(st *State, unit, svc string) []string {
	var out []string
	for _, id := range sortedKeys(st.Secrets) {
		if st.SecretSees(st.Secrets[id], unit, svc) {
			out = append(out, id)
		}
	}
	return out
}

func indexAudience(st *State) map[string][]string {
	out := map[string][]string{}
	for who, ids := range st.lookups().secrets {
		for id := range ids {
			out[who] = append(out[who], id)
		}
		sort.Strings(out[who])
	}
	return out
}

// checkSecretIndex compares st's index, and every unit's VisibleSecrets,
// with a full scan.
func checkSecretIndex(t *testing.T, st *State, where string) {
	t.Helper()
	got, want := indexAudience(st), scanAudience(st)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: index %v, scan %v", where, got, want)
	}
	for _, name := range st.SortedUnits() {
		u := st.Units[name]
		var ids []string
		for _, s := range st.VisibleSecrets(u.Name, u.Service) {
			ids = append(ids, s.ID)
		}
		if want := scanVisible(st, u.Name, u.Service); !slices.Equal(ids, want) {
			t.Fatalf("%s: %s sees %v, a scan %v", where, name, ids, want)
		}
	}
}

// TestSecretIndexMatchesAScan: after random sequences of secret changes
// (adds, sets, removals, grants and revokes to units and services,
// tracks, unit removals, re-seals), the audience index equals a full
// scan of the secrets, and so does it on a clone and on the state decoded
// from its encoding, as a snapshot restore decodes it.
func TestSecretIndexMatchesAScan(t *testing.T) {
	applied := map[string]int{}
	for seed := int64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewSource(seed))
		st := NewState()
		apply(t, st, 1, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "m1", Address: "10.0.0.1"}})
		e := env(map[string][]string{"web-db": {"web:db", "db:db"}})
		e.Services["db"] = ServiceSpec{Charm: "./db", CharmHash: "h-db", Units: intp(3)}
		e.Services["web"] = ServiceSpec{Charm: "./web", CharmHash: "h-web", Units: intp(3)}
		apply(t, st, 2, deployCmd(e))
		rel := -1
		for _, id := range st.SortedRelations() {
			if r := st.Relations[id]; r.Key != "" && len(r.Endpoints) == 2 && r.Endpoints[0].Service != r.Endpoints[1].Service {
				rel = id
			}
		}
		if rel < 0 {
			t.Fatal("no web-db relation")
		}
		var ids []string
		for i := 0; i < 8; i++ {
			id, err := NewSecretID(func(b []byte) error { _, err := rng.Read(b); return err })
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		index := uint64(3)
		for step := 0; step < 120; step++ {
			index++
			names := st.SortedUnits()
			if len(names) == 0 {
				break
			}
			u := st.Units[names[rng.Intn(len(names))]]
			if rng.Intn(40) == 0 {
				(&applying{State: st}).removeUnit(u)
				checkSecretIndex(t, st, fmt.Sprintf("seed %d step %d: remove %s", seed, step, u.Name))
				continue
			}
			remote := "web"
			if u.Service == "web" {
				remote = "db"
			}
			grantees := []string{remote}
			for _, o := range st.UnitsOf(remote) {
				grantees = append(grantees, o.Name)
			}
			c := SecretChange{ID: ids[rng.Intn(len(ids))], Relation: rel, Sealed: "sealed"}
			switch rng.Intn(7) {
			case 0:
				c.Op, c.Owner = SecretOpAdd, []string{SecretOwnerUnit, SecretOwnerApp}[rng.Intn(2)]
			case 1:
				c.Op = SecretOpSet
			case 2:
				c.Op, c.Sealed, c.Revision = SecretOpRemove, "", rng.Intn(3)
			case 3, 4:
				c.Op, c.Sealed, c.Grantee = SecretOpGrant, "", grantees[rng.Intn(len(grantees))]
			case 5:
				c.Op, c.Sealed, c.Grantee = SecretOpRevoke, "", grantees[rng.Intn(len(grantees))]
			case 6:
				c.Op, c.Sealed, c.Revision = SecretOpTrack, "", rng.Intn(3)
			}
			if skipped := (&applying{State: st}).applySecrets(index, u, rng.Intn(3) > 0, []SecretChange{c}, map[string]bool{}); len(skipped) == 0 {
				applied[c.Op]++
			}
			checkSecretIndex(t, st, fmt.Sprintf("seed %d step %d: %s %s by %s", seed, step, c.Op, c.Grantee, u.Name))
			if rng.Intn(30) == 0 {
				reseal := map[string][]string{}
				for id, s := range st.Secrets {
					for range s.Revisions {
						reseal[id] = append(reseal[id], "resealed")
					}
				}
				st.reseal(&ClusterKey{Reseal: reseal})
				checkSecretIndex(t, st, fmt.Sprintf("seed %d step %d: reseal", seed, step))
			}
		}
		checkSecretIndex(t, st.Clone(), fmt.Sprintf("seed %d: clone", seed))
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		var dec State
		if err := json.Unmarshal(b, &dec); err != nil {
			t.Fatal(err)
		}
		dec.Normalize()
		checkSecretIndex(t, &dec, fmt.Sprintf("seed %d: decoded", seed))
	}
	// The sequences are worth something only if every kind of change
	// applied.
	for _, op := range []string{SecretOpAdd, SecretOpSet, SecretOpRemove, SecretOpGrant, SecretOpRevoke, SecretOpTrack} {
		if applied[op] < 5 {
			t.Errorf("only %d %s changes applied over every sequence: %v", applied[op], op, applied)
		}
	}
}

// TestSecretsChangeOnlyThroughTheIndex: every change to State.Secrets
// goes through putSecret or dropSecret, which keep the audience index; a
// new transition that assigns the map, or an entry, directly would leave
// the index behind what universes must show.
func TestSecretsChangeOnlyThroughTheIndex(t *testing.T) {
	// A State is s or st in the model (t is a journal entry's Touched).
	direct := regexp.MustCompile(`\b(s|st)\.Secrets(\[[^\]]*\])?\s*=[^=]|delete\((s|st)\.Secrets,`)
	allowed := map[string]bool{"secrets_index.go": true, "clone.go": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || allowed[f] {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if direct.MatchString(line) {
				t.Errorf("%s:%d changes Secrets directly (use putSecret or dropSecret): %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}
