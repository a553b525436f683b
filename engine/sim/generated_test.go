package sim

import (
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
)

func randomHex(t *testing.T) string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// secretServer is how ops charms keep a password: the leader makes one up
// at random on its first run and stores it in the peer relation's
// application data; every later run, and every unit, reads it back from
// there. Each unit hands clients a connection string holding it.
func secretServer(t *testing.T) Hook {
	return Func(func(u *charmapi.Universe) (*charmapi.Result, error) {
		res := charmapi.NewResult()
		peers := u.Relation("peers")
		password := peers.App["password"]
		if u.Leader {
			if password == "" {
				password = randomHex(t)
			}
			res.App(peers.Ident).Set("password", password)
		}
		res.Local(peers.Ident).Set("ready", "yes")
		for _, rel := range u.RelationsNamed("api") {
			if password != "" {
				res.Local(rel.Ident).Set("url", "db://admin:"+password+"@"+u.Address)
			}
		}
		if password == "" {
			return res.Waiting("waiting for the leader's password"), nil
		}
		return res.Active("serving"), nil
	})
}

// freshServer writes a new random password on every run: not a function
// of its universe, and no fixed point of one.
func freshServer(t *testing.T) Hook {
	return Func(func(u *charmapi.Universe) (*charmapi.Result, error) {
		res := charmapi.NewResult()
		peers := u.Relation("peers")
		if u.Leader {
			res.App(peers.Ident).Set("password", randomHex(t))
		}
		res.Local(peers.Ident).Set("ready", "yes")
		return res.Active("serving"), nil
	})
}

func TestALeadersGeneratedSecretIsNotDivergence(t *testing.T) {
	env := NewEnv("secret")
	env.DeployMeta("server", serverMeta).Units(3)
	env.DeployMeta("client", clientMeta).Units(2)
	env.Relate("client:api", "server:api")
	env.Hook("server", secretServer(t)).Hook("client", Func(client))
	rep := converges(t, env, Options{Schedules: 12, Seed: 5})
	// The leader's password, and its own connection string built from it
	// on the same first run; nothing of the followers, who read it.
	want := []GeneratedKey{{"server/0", "relations.api:0.local.url"}, {"server/0", "relations.peers:1.app.password"}}
	if !slices.Equal(rep.Generated, want) {
		t.Errorf("generated keys %+v, want %+v:\n%s", rep.Generated, want, rep)
	}
	final := rep.FixedPoints[0].Settings
	password := final["server relations.peers:1.app.password"]
	if len(password) != 24 || final["server/2 relations.api:0.local.url"] != "db://admin:"+password+"@127.0.0.1" {
		t.Errorf("final settings: %v", final)
	}
	if !strings.Contains(rep.String(), "generated once and read back after") {
		t.Errorf("the report does not say which keys it took as generated:\n%s", rep)
	}
}

func TestAFreshRandomValueOnEveryRunIsStillDivergence(t *testing.T) {
	env := NewEnv("fresh")
	env.DeployMeta("server", serverMeta).Units(2)
	env.Hook("server", freshServer(t))
	rep, err := env.Simulate(t.Context(), Options{Schedules: 6, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || len(rep.Generated) != 0 {
		t.Fatalf("a fresh password on every run passed as generated once:\n%s", rep)
	}
	if len(rep.Nondeterministic) == 0 || rep.Nondeterministic[0].Unit != "server/0" {
		t.Errorf("want server/0 reported as not a function of its universe:\n%s", rep)
	}
}
