package model

import (
	"fmt"
	"strings"
	"testing"
)

func tokenCreate(env, name, role string, h byte) *Command {
	return &Command{Op: OpTokenCreate, TokenCreate: &TokenCreate{Hash: strings.Repeat(string(h), 64), Env: env, Name: name, Role: role}}
}

// TestEnvTokens: an environment's tokens are kept by hash with their
// role; names and hashes are unique, the cluster's credentials are never
// reused, bad roles and missing environments are refused before anything
// changes, and removing the environment revokes its tokens.
func TestEnvTokens(t *testing.T) {
	cl := NewCluster()
	capply(t, cl, 1, &Command{Op: OpAuth, Auth: &Auth{Operator: strings.Repeat("a", 64), Join: strings.Repeat("b", 64)}})
	capply(t, cl, 2, envAdd("dev", uuidA))
	capply(t, cl, 3, tokenCreate("dev", "ci", RoleOperator, 'c'))
	capply(t, cl, 4, tokenCreate("dev", "dash", RoleReader, 'd'))
	if tok, ok := cl.Token(strings.Repeat("d", 64)); !ok || tok.Env != "dev" || tok.Role != RoleReader || tok.Created != 4 {
		t.Fatalf("dev's reader token: %+v", tok)
	}
	if noop, err := cl.Admit(tokenCreate("dev", "ci", RoleOperator, 'c'), nil); !noop || err != nil {
		t.Errorf("creating ci as it is: noop %v, %v", noop, err)
	}
	for _, tc := range []struct {
		c    *Command
		want string
	}{
		{tokenCreate("prod", "ci", RoleOperator, 'e'), `environment "prod" does not exist`},
		{tokenCreate("dev", "ci", RoleReader, 'e'), "already has a token named ci"},
		{tokenCreate("dev", "other", RoleReader, 'c'), "its hash is another token's"},
		{tokenCreate("dev", "other", RoleReader, 'a'), "a credential of the cluster's"},
		{tokenCreate("dev", "other", "admin", 'e'), `role "admin"`},
		{tokenCreate("dev", "Bad", RoleReader, 'e'), `token name "Bad" is invalid`},
		{&Command{Op: OpTokenCreate, Env: "dev", TokenCreate: &TokenCreate{Hash: strings.Repeat("e", 64), Env: "dev", Name: "x", Role: RoleReader}}, "applies to the whole cluster"},
		{&Command{Op: OpTokenRevoke, TokenRevoke: &TokenRevoke{Env: "dev", Name: "nope"}}, "has no token named \"nope\" (tokens: ci, dash)"},
	} {
		if _, err := capplyErr(t, cl, 5, tc.c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %+v: %v; want %q", tc.c.Op, tc.c.TokenCreate, err, tc.want)
		}
	}
	if got := cl.TokensOf("dev"); strings.Join(got, ",") != "ci,dash" {
		t.Fatalf("refusals changed dev's tokens: %v", got)
	}
	capply(t, cl, 6, &Command{Op: OpTokenRevoke, TokenRevoke: &TokenRevoke{Env: "dev", Name: "ci"}})
	if _, ok := cl.Token(strings.Repeat("c", 64)); ok {
		t.Error("ci still opens dev after its revoke")
	}
	capply(t, cl, 7, &Command{Op: OpEnvRemove, EnvRemove: &EnvRemove{Name: "dev"}})
	capply(t, cl, 8, envAdd("dev", uuidB))
	if _, ok := cl.Token(strings.Repeat("d", 64)); ok || len(cl.Tokens) != 0 {
		t.Errorf("a token of the removed dev opens the new one: %v", cl.Tokens)
	}
}

// TestEnvTokensAreBounded: an environment holds at most MaxEnvTokens.
func TestEnvTokensAreBounded(t *testing.T) {
	cl := NewCluster()
	capply(t, cl, 1, envAdd("dev", uuidA))
	idx := uint64(1)
	for i := 0; i < MaxEnvTokens; i++ {
		idx++
		c := tokenCreate("dev", fmt.Sprintf("t%d", i), RoleReader, 'a')
		c.TokenCreate.Hash = fmt.Sprintf("%064x", i+1)
		capply(t, cl, idx, c)
	}
	c := tokenCreate("dev", "one-more", RoleReader, 'f')
	if _, err := capplyErr(t, cl, idx+1, c); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("has %d tokens, the most one may have", MaxEnvTokens)) {
		t.Errorf("token %d: %v", MaxEnvTokens+1, err)
	}
}

// TestDefaultEnvTokens: the default environment's tokens name no
// environment, so renaming it keeps them and a later environment of its
// old name is not opened by them; naming it by its name is refused.
func TestDefaultEnvTokens(t *testing.T) {
	cl := NewCluster()
	capply(t, cl, 1, deployTo("", "prod", 1))
	capply(t, cl, 2, tokenCreate("", "dash", RoleReader, 'd'))
	if tok, ok := cl.Token(strings.Repeat("d", 64)); !ok || tok.Env != "" || tok.Role != RoleReader {
		t.Fatalf("the default environment's reader token: %+v", tok)
	}
	if _, err := capplyErr(t, cl, 3, tokenCreate("prod", "ci", RoleOperator, 'e')); err == nil || !strings.Contains(err.Error(), "send it with an empty env") {
		t.Errorf("a token naming the default environment by its name: %v", err)
	}
	if _, err := capplyErr(t, cl, 3, tokenCreate("", "dash", RoleOperator, 'e')); err == nil || !strings.Contains(err.Error(), "prod (default) already has a token named dash") {
		t.Errorf("a second dash in the default environment: %v", err)
	}
	capply(t, cl, 4, deployTo("", "renamed", 1))
	capply(t, cl, 5, envAdd("prod", uuidA))
	if tok, ok := cl.Token(strings.Repeat("d", 64)); !ok || tok.Env != "" || len(cl.TokensOf("prod")) != 0 {
		t.Errorf("after renaming the default environment: %+v, prod's tokens %v", tok, cl.TokensOf("prod"))
	}
	capply(t, cl, 6, &Command{Op: OpTokenRevoke, TokenRevoke: &TokenRevoke{Name: "dash"}})
	if len(cl.Tokens) != 0 {
		t.Errorf("revoked: %v", cl.Tokens)
	}
}
