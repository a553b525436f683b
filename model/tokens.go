package model

import (
	"fmt"
	"sort"
)

// Environment-scoped credentials: `fixpoint token create --env NAME --role
// operator|reader` makes a token that opens one environment and nothing of
// the cluster's (docs/environments.md, part C). The cluster keeps their
// hashes (Cluster.Tokens), never a usable secret, as it keeps Auth's; the
// API checks a request's environment against its token's on every route.

// Token roles.
const (
	// RoleOperator may do everything of its environment.
	RoleOperator = "operator"
	// RoleReader may read its environment, never change it or reveal a
	// secret.
	RoleReader = "reader"
)

// KindToken names environment tokens, unique within an environment.
const KindToken NameKind = "token"

// MaxEnvTokens caps the tokens of one environment: each is checked on
// every request.
const MaxEnvTokens = 100

// EnvToken is one environment-scoped credential, kept by the sha256 hex
// of the token (Cluster.Tokens' key).
type EnvToken struct {
	Env  string `json:"env"`
	Name string `json:"name"`
	Role string `json:"role"`
	// Created is the index of its token-create.
	Created uint64 `json:"created"`
}

// TokenCreate records a new environment token's hash. Env "" is the
// default environment: its tokens are kept under no name, so that a
// deploy renaming the default environment neither strands them nor hands
// them to a later environment of the old name.
type TokenCreate struct {
	Hash string `json:"hash"`
	Env  string `json:"env"`
	Name string `json:"name"`
	Role string `json:"role"`
}

// TokenRevoke drops the environment token of that name; Env "" is the
// default environment.
type TokenRevoke struct {
	Env  string `json:"env"`
	Name string `json:"name"`
}

func (c *TokenCreate) check() error {
	if !isHexHash(c.Hash) {
		return fmt.Errorf("token %s: its hash is not a sha256 hex digest", Quote(c.Name, 72))
	}
	if err := checkTokenEnv(c.Env); err != nil {
		return err
	}
	if err := CheckName(KindToken, c.Name); err != nil {
		return err
	}
	if c.Role != RoleOperator && c.Role != RoleReader {
		return fmt.Errorf("token %s: role %s; a token is an %s or a %s of its environment", c.Name, Quote(c.Role, 24), RoleOperator, RoleReader)
	}
	return nil
}

// checkTokenEnv refuses a name no environment could have; "" is the
// default environment.
func checkTokenEnv(env string) error {
	if env == "" {
		return nil
	}
	return CheckName(KindEnv, env)
}

func (r *TokenRevoke) check() error {
	if err := checkTokenEnv(r.Env); err != nil {
		return err
	}
	return CheckName(KindToken, r.Name)
}

// Token returns the environment token whose hash is h.
func (c *Cluster) Token(h string) (*EnvToken, bool) {
	t, ok := c.Tokens[h]
	return t, ok
}

// TokensOf returns the names of env's tokens, sorted.
func (c *Cluster) TokensOf(env string) []string {
	var out []string
	for _, t := range c.Tokens {
		if t.Env == env {
			out = append(out, t.Name)
		}
	}
	sort.Strings(out)
	return out
}

// tokenNamed returns the hash of env's token called name.
func (c *Cluster) tokenNamed(env, name string) (string, bool) {
	for h, t := range c.Tokens {
		if t.Env == env && t.Name == name {
			return h, true
		}
	}
	return "", false
}

// checkTokenCreate refuses a token of an environment that does not exist
// (the default one is named "", never by its name, which a deploy may
// change), a name or hash taken, and one past MaxEnvTokens; creating one
// as it exists is a no-op.
func (c *Cluster) checkTokenCreate(tc *TokenCreate) (noop bool, err error) {
	if _, ok := c.Envs[tc.Env]; !ok && tc.Env != "" {
		if tc.Env == c.Default.Name {
			return false, fmt.Errorf("token %s: environment %s is the default environment, whose tokens name no environment; send it with an empty env", tc.Name, tc.Env)
		}
		return false, c.noEnv(tc.Env)
	}
	if t, ok := c.Tokens[tc.Hash]; ok {
		if *t == (EnvToken{Env: tc.Env, Name: tc.Name, Role: tc.Role, Created: t.Created}) {
			return true, nil
		}
		return false, fmt.Errorf("token %s: its hash is another token's; make a new token", tc.Name)
	}
	if a := c.Default.Auth; a != nil && (tc.Hash == a.Operator || tc.Hash == a.Join) {
		return false, fmt.Errorf("token %s: its hash is a credential of the cluster's; make a new token", tc.Name)
	}
	for _, m := range c.Default.Machines {
		if tc.Hash == m.Credential {
			return false, fmt.Errorf("token %s: its hash is machine %s's credential; make a new token", tc.Name, m.Name)
		}
	}
	if _, ok := c.tokenNamed(tc.Env, tc.Name); ok {
		return false, fmt.Errorf("%s already has a token named %s; revoke it first (`fixpoint token revoke%s %s`) or pick another name", c.tokenEnvLabel(tc.Env), tc.Name, envFlag(tc.Env), tc.Name)
	}
	if n := len(c.TokensOf(tc.Env)); n >= MaxEnvTokens {
		return false, fmt.Errorf("%s has %d tokens, the most one may have; revoke those no longer used", c.tokenEnvLabel(tc.Env), n)
	}
	return false, nil
}

// checkTokenRevoke refuses a token that does not exist, listing those
// that do.
func (c *Cluster) checkTokenRevoke(tr *TokenRevoke) error {
	if _, ok := c.tokenNamed(tr.Env, tr.Name); !ok {
		return fmt.Errorf("%s has no token named %s (tokens: %s)", c.tokenEnvLabel(tr.Env), Quote(tr.Name, 72), listOr(c.TokensOf(tr.Env)))
	}
	return nil
}

// tokenEnvLabel names a token's environment in messages.
func (c *Cluster) tokenEnvLabel(env string) string {
	if env == "" {
		return c.defaultLabel()
	}
	return "environment " + Quote(env, 72)
}

// envFlag is the --env flag naming env on the command line, none for the
// default environment.
func envFlag(env string) string {
	if env == "" {
		return ""
	}
	return " --env " + env
}

// applyToken creates or revokes a token; the op was judged.
func (c *Cluster) applyToken(index uint64, cmd *Command) {
	switch cmd.Op {
	case OpTokenCreate:
		tc := cmd.TokenCreate
		if c.Tokens == nil {
			c.Tokens = map[string]*EnvToken{}
		}
		c.Tokens[tc.Hash] = &EnvToken{Env: tc.Env, Name: tc.Name, Role: tc.Role, Created: index}
	case OpTokenRevoke:
		h, _ := c.tokenNamed(cmd.TokenRevoke.Env, cmd.TokenRevoke.Name)
		delete(c.Tokens, h)
	}
}

// dropTokensOf revokes every token of a removed environment: a later
// environment of that name is not opened by them.
func (c *Cluster) dropTokensOf(env string) {
	for h, t := range c.Tokens {
		if t.Env == env {
			delete(c.Tokens, h)
		}
	}
}
