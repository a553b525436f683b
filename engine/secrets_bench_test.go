package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// BenchmarkBuildWithManySecrets builds the universe of every unit of web
// (secretBenchUnits units) while db/0 owns model.MaxSecretsPerOwner
// secrets, each granted to one web unit: what a unit's universe costs
// when the state holds many more secrets than the unit sees.
func BenchmarkBuildWithManySecrets(b *testing.B) {
	const secretBenchUnits = 500
	s := newMemStore()
	secretShopN(b, s, secretBenchUnits)
	var rel int
	_ = s.View(func(st *model.State) error {
		for _, id := range st.SortedRelations() {
			if r := st.Relations[id]; r.Key != "" {
				rel = id
			}
		}
		return nil
	})
	var batch []model.SecretChange
	flush := func() {
		if len(batch) == 0 {
			return
		}
		if _, err := s.Apply(context.Background(), &model.Command{Op: model.OpResults, Results: []model.Result{{
			Unit: "db/0", Hash: hashOf(s, "db/0"), Seen: &model.Seen{Life: model.Alive}, Secrets: batch}}}); err != nil {
			b.Fatal(err)
		}
		batch = nil
	}
	for i := 0; i < model.MaxSecretsPerOwner; i++ {
		id, err := charmapi.NewSecretID()
		if err != nil {
			b.Fatal(err)
		}
		bare, _ := model.ParseSecretURI(id)
		batch = append(batch,
			model.SecretChange{Op: model.SecretOpAdd, ID: bare, Owner: model.SecretOwnerUnit, Sealed: "sealed"},
			model.SecretChange{Op: model.SecretOpGrant, ID: bare, Grantee: fmt.Sprintf("web/%d", i%secretBenchUnits), Relation: rel})
		if len(batch) >= model.MaxSecretChanges {
			flush()
		}
	}
	flush()
	seen := 0
	_ = s.View(func(st *model.State) error {
		if len(st.Secrets) != model.MaxSecretsPerOwner {
			b.Fatalf("%d secrets in the state, want %d", len(st.Secrets), model.MaxSecretsPerOwner)
		}
		uni, _ := Build(st, "web/0")
		seen = len(uni.Secrets)
		return nil
	})
	if seen == 0 {
		b.Fatal("web/0 sees none of the secrets")
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = s.View(func(st *model.State) error {
			for n := 0; n < secretBenchUnits; n++ {
				Build(st, fmt.Sprintf("web/%d", n))
			}
			return nil
		})
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*secretBenchUnits), "ns/universe")
}

// secretShopN deploys db (one unit) and web (n units), related, on
// machine m.
func secretShopN(tb testing.TB, s *memStore, n int) {
	tb.Helper()
	charms := map[string]*model.Charm{
		"h-db":  {Hash: "h-db", Meta: model.CharmMeta{Name: "db", Provides: map[string]model.Endpoint{"db": {Interface: "kv"}}}},
		"h-web": {Hash: "h-web", Meta: model.CharmMeta{Name: "web", Requires: map[string]model.Endpoint{"db": {Interface: "kv"}}}},
	}
	env := model.Environment{APIVersion: model.APIVersion, Name: "shop",
		Services:  map[string]model.ServiceSpec{"db": {CharmHash: "h-db", Units: intp(1)}, "web": {CharmHash: "h-web", Units: intp(n)}},
		Relations: map[string][]string{"web-db": {"web:db", "db:db"}}}
	ctx := context.Background()
	if _, err := s.Apply(ctx, &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: "m", Address: "10.0.0.9"}}); err != nil {
		tb.Fatal(err)
	}
	if _, err := s.Apply(ctx, &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}}); err != nil {
		tb.Fatal(err)
	}
}
