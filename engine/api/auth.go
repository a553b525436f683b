package api

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/fixpoint/fixpoint/model"
)

// Roles a token can carry.
const (
	roleOperator = "operator"
	roleJoin     = "join"
	roleAgent    = "agent"
	// roleEnv is an environment's token (model.EnvToken): its access is
	// model.RoleOperator or model.RoleReader of its environment alone.
	roleEnv = "environment token"
)

// principal is who a request comes from.
type principal struct {
	role    string
	machine string // for agents
	// credential is the hash of the agent's token, as the state keeps
	// it: a renewal registers it again without hashing the token twice.
	credential string
	// env, access and token are an environment token's: its environment
	// ("" the default), its role there, and its name.
	env, access, token string
	// envLabel names env in messages.
	envLabel string
	// defaultName is the default environment's name as the token was
	// identified: a prefix naming it is the default environment's.
	defaultName string
}

func (p principal) String() string {
	switch p.role {
	case roleAgent:
		return "agent of machine " + p.machine
	case roleEnv:
		return "token " + p.token + " (" + p.access + " of " + p.envLabel + ")"
	}
	return p.role
}

// mayReveal is whether p may see secret values: the cluster's operator,
// or an operator of the environment asked (allowed checked which).
func (p principal) mayReveal() bool {
	return p.role == roleOperator || (p.role == roleEnv && p.access == model.RoleOperator)
}

type principalKey struct{}

// HashToken is how tokens are kept in the replicated state.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// NewToken returns a fresh random token.
func NewToken() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic("api: no randomness: " + err.Error())
	}
	return hex.EncodeToString(b)
}

func equalHash(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// public paths need no token: probes, metrics and the dashboard's static
// page (which asks for a token before it reads anything).
func public(path string) bool {
	return path == "/healthz" || path == "/readyz" || path == "/metrics" || path == "/ui" || strings.HasPrefix(path, "/ui/")
}

// authorize finds who sends r and whether they may; it answers the
// request itself when not. Refusals are logged without the token.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	if public(r.URL.Path) {
		return r, true
	}
	token := bearerToken(r)
	p, auth, expired := s.identify(token)
	if token != "" && p.role == "" && !expired && !s.node.IsLeader() && s.catchUp.wait(r.Context()) == nil {
		// The leader may have issued the token a moment ago, to an agent
		// that registered through this node, before this node applied it.
		p, auth, expired = s.identify(token)
	}
	if auth == nil && token != "" {
		writeError(w, http.StatusServiceUnavailable, "the control plane has no credentials yet: it is still bootstrapping; try again")
		return r, false
	}
	if expired {
		s.log.Warn("refused request with an expired join token", "method", r.Method, "path", r.URL.Path, "remote", remote(r))
		writeError(w, http.StatusUnauthorized, "the join token has expired: ask the operator for a new one (`fixpoint token rotate join`)")
		return r, false
	}
	if p.role == "" {
		s.log.Warn("refused request without a valid token", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
		writeError(w, http.StatusUnauthorized, "missing or unknown token: pass the operator token (in $FIXPOINT_TOKEN or the data dir's %s) as `Authorization: Bearer TOKEN`", "operator.token")
		return r, false
	}
	why := ""
	if p.role == roleEnv {
		why = envAllowed(p, r, s.mux.pattern(r))
	} else {
		why = allowed(p, r)
	}
	if why != "" {
		s.log.Warn("refused request", "method", r.Method, "path", r.URL.Path, "principal", p.String(), "why", why, "remote", r.RemoteAddr)
		writeError(w, http.StatusForbidden, "%s may not %s: %s", p, describe(r), why)
		return r, false
	}
	return r.WithContext(context.WithValue(r.Context(), principalKey{}, p)), true
}

// identify finds who token stands for in this node's copy of the state:
// the principal (no role when nobody), the credentials in force, and
// whether the token is a join token past its expiry.
func (s *Server) identify(token string) (principal, *model.Auth, bool) {
	var auth *model.Auth
	expired := false
	p := principal{}
	if token == "" {
		return p, nil, false
	}
	h := HashToken(token)
	_ = s.node.ViewCluster(func(c *model.Cluster) error {
		st := c.Default
		auth = st.Auth
		switch {
		case auth == nil:
		case equalHash(h, auth.Operator):
			p.role = roleOperator
		case equalHash(h, auth.Join):
			if auth.JoinExpires != 0 && time.Now().UnixNano() >= auth.JoinExpires {
				expired = true
				break
			}
			p.role = roleJoin
		default:
			if name, ok := s.agentOf(st, h); ok {
				p = principal{role: roleAgent, machine: name, credential: h}
			} else if t, ok := c.Token(h); ok {
				p = principal{role: roleEnv, env: t.Env, access: t.Role, token: t.Name, envLabel: envLabel(c, t.Env), defaultName: c.Default.Name}
			}
		}
		return nil
	})
	return p, auth, expired
}

// catchUpTimeout bounds how long a request with an unknown token waits
// for its node to catch up with the leader before it is refused.
const catchUpTimeout = 3 * time.Second

// catchUp brings this node up to what the leader had committed (a read
// index, as linearizable reads take), one request at a time: requests
// with tokens nobody issued, or asking for operations not applied here
// yet, cost the leader at most one read index at a time, however many
// arrive.
type catchUp struct {
	node Node
	slot chan struct{} // holds the one catch-up running
}

func newCatchUp(node Node) *catchUp {
	return &catchUp{node: node, slot: make(chan struct{}, 1)}
}

// wait waits until this node has applied everything the leader had
// committed when it was called, within catchUpTimeout.
func (c *catchUp) wait(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, catchUpTimeout)
	defer cancel()
	select {
	case c.slot <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-c.slot }()
	return c.node.Linearize(ctx)
}

// credentials remembers which machine a credential hash belongs to, so
// that an agent's request does not compare its hash with every machine's.
// It is only a hint: a hit is checked against the state it is used with.
type credentials struct {
	mu      sync.Mutex
	machine map[string]string // credential hash -> machine
}

// agentOf returns the machine whose credential hashes to h in st. st is
// held by View.
func (s *Server) agentOf(st *model.State, h string) (string, bool) {
	c := &s.creds
	c.mu.Lock()
	name, ok := c.machine[h]
	c.mu.Unlock()
	if ok {
		if m := st.Machines[name]; m != nil && equalHash(h, m.Credential) {
			return name, true
		}
	}
	for name, m := range st.Machines {
		if equalHash(h, m.Credential) {
			c.mu.Lock()
			if c.machine == nil || len(c.machine) > 2*len(st.Machines)+64 {
				// Rotated and forgotten credentials are dropped with the rest.
				c.machine = map[string]string{}
			}
			c.machine[h] = name
			c.mu.Unlock()
			return name, true
		}
	}
	return "", false
}

// allowed returns why p may not make request r, or "".
func allowed(p principal, r *http.Request) string {
	if p.role == roleOperator {
		return ""
	}
	path := r.URL.Path
	machine := r.URL.Query().Get("machine")
	switch {
	case r.URL.Query().Has("reveal"):
		return "only the operator credential may see secret values (?reveal, --reveal); ask without it to see them redacted"
	case path == "/v1/agent/register":
		return "" // the handler checks which machine
	case p.role == roleJoin:
		return "a join token only registers machines"
	case path == "/v1/agent/work" || path == "/v1/agent/results" || path == "/v1/agent/heartbeat" || path == "/v1/agent/logs" ||
		path == "/v1/agent/actions/start" || path == "/v1/agent/actions/finish":
		// The state checks that an operation is of a unit on machine.
		if machine != p.machine {
			return "its credential covers only the units on machine " + p.machine
		}
		return ""
	case r.Method == http.MethodGet && strings.HasPrefix(path, "/v1/charms/"):
		return ""
	case r.Method == http.MethodGet && strings.HasPrefix(path, "/v1/resources/"):
		return "" // the handler checks the machine uses it
	}
	return "agents only claim work, take and report operations, post results and fetch charms and resources for their own machine"
}

func describe(r *http.Request) string {
	if m := r.URL.Query().Get("machine"); m != "" {
		return r.Method + " " + r.URL.Path + " for machine " + m
	}
	return r.Method + " " + r.URL.Path
}

func principalOf(r *http.Request) principal {
	p, _ := r.Context().Value(principalKey{}).(principal)
	return p
}
