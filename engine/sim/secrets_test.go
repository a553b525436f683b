package sim

import (
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
)

// TestJujuSecretsReachAFixedPoint: the server's leader keeps its password
// in a Juju secret it adds once and grants to its clients; the clients
// read it. Every schedule reaches the same fixed point: the simulator
// seals the contents as the control plane's leader does.
func TestJujuSecretsReachAFixedPoint(t *testing.T) {
	server := Func(func(u *charmapi.Universe) (*charmapi.Result, error) {
		res := charmapi.NewResult()
		sec := u.Secret("pw")
		for _, rel := range u.RelationsNamed("api") {
			if !u.Leader {
				continue
			}
			if sec == nil {
				id, err := charmapi.NewSecretID()
				if err != nil {
					return nil, err
				}
				label := "pw"
				res.Secrets = append(res.Secrets,
					charmapi.SecretChange{Op: "add", ID: id, Owner: "application", Label: &label, Content: map[string]string{"password": randomHex(t)}},
					charmapi.SecretChange{Op: "grant", ID: id, Relation: rel.Ident})
				res.App(rel.Ident).Set("secret-id", id)
			} else {
				res.App(rel.Ident).Set("secret-id", sec.ID)
			}
		}
		return res.Active("serving"), nil
	})
	client := Func(func(u *charmapi.Universe) (*charmapi.Result, error) {
		res := charmapi.NewResult()
		for _, rel := range u.RelationsNamed("api") {
			sec := u.Secret(rel.RemoteApp["secret-id"])
			if sec == nil {
				return res.Waiting("no secret yet"), nil
			}
			if sec.Revision == 0 {
				res.Secrets = append(res.Secrets, charmapi.SecretChange{Op: "track", ID: sec.ID, Revision: sec.Latest})
				return res.Waiting("reading the secret"), nil
			}
			if len(sec.Content["password"]) == 24 {
				return res.Active("have the password"), nil
			}
		}
		return res.Blocked("no password"), nil
	})
	env := NewEnv("jujusecrets")
	env.DeployMeta("server", serverMeta).Units(2)
	env.DeployMeta("client", clientMeta).Units(2)
	env.Relate("client:api", "server:api")
	env.Hook("server", server).Hook("client", client)
	rep := converges(t, env, Options{Schedules: 8, Seed: 3})
	for _, sc := range rep.Schedules {
		for _, unit := range []string{"client/0", "client/1"} {
			if got := sc.Final[unit+" status"]; got != "active: have the password" {
				t.Errorf("schedule %d: %s status %q\n%s", sc.Index, unit, got, rep)
			}
		}
	}
}
