package model

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestSecretKey(t *testing.T) {
	for key, want := range map[string]bool{
		"password": true, "db-password": true, "DB_PASSWORD": true, "root_passwd": true,
		"secret": true, "client-secret": true, "token": true, "auth-tokens": true,
		"credential": true, "aws-credentials": true,
		"key": true, "api_key": true, "private-key": true, "apiKey": true, "keyName": true,
		"ssh-keys": true, "tls.key": true,
		"host": false, "port": false, "user": false, "private-address": false,
		"keystone-url": false, "database": false, "allowed-units": false, "": false,
	} {
		if got := SecretKey(key); got != want {
			t.Errorf("SecretKey(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestRedactShowsAHashPrefixOnly(t *testing.T) {
	r := Redact("ee85760737261cf2")
	if !strings.HasPrefix(r, "<redacted sha256:") || !strings.HasSuffix(r, "…>") || strings.Contains(r, "ee85760737261cf2") {
		t.Fatalf("Redact = %q", r)
	}
	if r != Redact("ee85760737261cf2") || r == Redact("ee85760737261cf3") {
		t.Fatalf("Redact is not a function of the value that tells values apart: %q", r)
	}
	// printf ee85760737261cf2 | sha256sum: 6b95eb19...
	if want := "<redacted sha256:6b95eb19…>"; r != want {
		t.Fatalf("Redact = %q, want %q", r, want)
	}
}

func TestRedactBagCopiesOnlyWhenSecret(t *testing.T) {
	bag := map[string]string{"host": "10.0.0.1", "password": "hunter22"}
	got := RedactBag(bag)
	if bag["password"] != "hunter22" {
		t.Fatal("RedactBag changed its argument")
	}
	if got["host"] != "10.0.0.1" || got["password"] != Redact("hunter22") {
		t.Fatalf("RedactBag = %v", got)
	}
	plain := map[string]string{"host": "10.0.0.1"}
	if got := RedactBag(plain); len(got) != 1 || got["host"] != "10.0.0.1" {
		t.Fatalf("RedactBag(plain) = %v", got)
	}
	opts := map[string]Option{"seed": {Type: SecretType}, "port": {Type: "int"}}
	cfg := map[string]any{"seed": "fixpoint-demo", "port": int64(6379)}
	rc := RedactConfig(cfg, opts)
	if rc["seed"] != Redact("fixpoint-demo") || rc["port"] != int64(6379) || cfg["seed"] != "fixpoint-demo" {
		t.Fatalf("RedactConfig = %v (argument now %v)", rc, cfg)
	}
}

func TestScrub(t *testing.T) {
	text := "connecting with hunter22 and hunter22x; pin 123"
	got := Scrub(text, []string{"hunter22", "hunter22x", "123"})
	if strings.Contains(got, "hunter22") || !strings.Contains(got, Redact("hunter22x")) || !strings.Contains(got, Redact("hunter22")) {
		t.Fatalf("Scrub = %q", got)
	}
	// Shorter than MinScrubLen: left alone.
	if !strings.HasSuffix(got, "pin 123") {
		t.Fatalf("Scrub replaced a value shorter than %d bytes: %q", MinScrubLen, got)
	}
}

// secretState is a db service handing a password to web over relation 1,
// with a secret config option and secret leader data.
func secretState() *State {
	st := NewState()
	st.Charms["h-db"] = &Charm{Hash: "h-db", Meta: CharmMeta{Name: "db",
		Provides: map[string]Endpoint{"db": {Interface: "kv"}},
		Options:  map[string]Option{"seed": {Type: SecretType}, "port": {Type: "int"}}}}
	st.Charms["h-web"] = &Charm{Hash: "h-web", Meta: CharmMeta{Name: "web", Requires: map[string]Endpoint{"db": {Interface: "kv"}}}}
	st.Machines["m0"] = &Machine{Name: "m0", Address: "10.0.0.1"}
	st.Services["db"] = &Service{Name: "db", Charm: "h-db", Life: Alive, Config: map[string]any{"seed": "seed-value", "port": float64(6379)},
		LeaderData: NewBag(map[string]string{"admin-token": "tok-value", "mode": "ha"}, 0)}
	st.Services["web"] = &Service{Name: "web", Charm: "h-web", Life: Alive}
	st.Relations[1] = &Relation{ID: 1, Key: "db:db web:db", Interface: "kv", Scope: Global, Life: Alive,
		Endpoints: []RelEndpoint{{Service: "db", Name: "db"}, {Service: "web", Name: "db"}},
		App:       map[string]*Bag{"db": NewBag(map[string]string{"api_key": "app-key-value"}, 0)}}
	st.Units["db/0"] = &Unit{Name: "db/0", Service: "db", Machine: "m0", Life: Alive,
		Settings: NewRelBags(map[int]*Bag{1: NewBag(map[string]string{"host": "10.0.0.1", "password": "pw-value"}, 0)}),
		State:    map[string]string{"root-password": "state-value"}}
	st.Units["web/0"] = &Unit{Name: "web/0", Service: "web", Machine: "m0", Life: Alive}
	st.Normalize()
	return st
}

func TestStateRedactedLeavesTheStateAlone(t *testing.T) {
	st := secretState()
	before, _ := json.Marshal(st)
	red := st.Redacted()
	after, _ := json.Marshal(st)
	if string(before) != string(after) {
		t.Fatal("Redacted changed the state it copied")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(red)
	data := buf.Bytes()
	for _, v := range []string{"seed-value", "tok-value", "app-key-value", "pw-value", "state-value"} {
		if !strings.Contains(string(before), v) {
			t.Fatalf("fixture lacks %s", v)
		}
		if strings.Contains(string(data), v) {
			t.Errorf("the redacted state holds %s", v)
		}
		if !strings.Contains(string(data), Redact(v)) {
			t.Errorf("the redacted state lacks %s's redaction", v)
		}
	}
	for _, v := range []string{`"mode":"ha"`, `"host":"10.0.0.1"`, `"port":6379`} {
		if !strings.Contains(string(data), v) {
			t.Errorf("the redacted state lost %s", v)
		}
	}
}

func TestSecretsOfWhatAUnitSees(t *testing.T) {
	st := secretState()
	has := func(unit string, want ...string) {
		t.Helper()
		got := strings.Join(st.SecretsOf(unit), " ")
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("SecretsOf(%s) = %q, lacks %s", unit, got, w)
			}
		}
		if strings.Contains(got, "10.0.0.1") || strings.Contains(got, "6379") {
			t.Errorf("SecretsOf(%s) = %q holds values that are not secret", unit, got)
		}
	}
	has("db/0", "seed-value", "tok-value", "app-key-value", "pw-value", "state-value")
	// web/0 sees db/0's settings and db's application bag.
	has("web/0", "pw-value", "app-key-value")
	if st.SecretsOf("nope/0") != nil {
		t.Error("SecretsOf of an unknown unit is not empty")
	}
}

func TestPlanShowsSecretOptionsRedacted(t *testing.T) {
	st := secretState()
	d := &Desired{Name: "shop", Services: map[string]*DesiredService{
		"db": {Name: "db", Charm: "h-db", CharmName: "db", Units: 1, Secret: map[string]bool{"seed": true},
			Config: map[string]any{"seed": "new-seed", "port": float64(6380)}},
	}, Relations: map[RelationKey]*DesiredRelation{}}
	var seed, port *Change
	for _, c := range Plan(st, d) {
		if c.Kind == SetConfig && c.Key == "seed" {
			seed = &c
		}
		if c.Kind == SetConfig && c.Key == "port" {
			port = &c
		}
	}
	if seed == nil || port == nil {
		t.Fatalf("the plan lacks the config changes")
	}
	if seed.Old != Redact("seed-value") || seed.New != Redact("new-seed") || strings.Contains(seed.String(), "seed-value") {
		t.Errorf("secret option in the plan: %s", seed)
	}
	if port.Old != "6379" || port.New != "6380" {
		t.Errorf("plain option in the plan: %s", port)
	}
}
