package api

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/model/fault"
)

// The cluster's environments and their tokens (docs/environments.md,
// part C): only the cluster's operator credential reaches these routes
// (scope.go lists none of them), since each environment's tokens are
// kept here.

// NewEnv is the body of POST /v1/envs; a zero cap takes the cluster's
// limit.
type NewEnv struct {
	Name        string `json:"name"`
	MaxUnits    int    `json:"max_units,omitempty"`
	MaxServices int    `json:"max_services,omitempty"`
}

// EnvInfo is one environment in GET /v1/envs.
type EnvInfo struct {
	Name string `json:"name"`
	UUID string `json:"uuid,omitempty"`
	// Default marks the default environment, whose routes are the
	// unprefixed ones.
	Default  bool `json:"default,omitempty"`
	Services int  `json:"services"`
	Units    int  `json:"units"`
	// Created is the index of its env-add; 0 for the default environment.
	Created     uint64 `json:"created"`
	MaxUnits    int    `json:"max_units,omitempty"`
	MaxServices int    `json:"max_services,omitempty"`
	// Tokens are the names of its environment tokens.
	Tokens []string `json:"tokens"`
}

// NewEnvToken is the body of POST /v1/tokens. Env "" (or the default
// environment's name) is the default environment.
type NewEnvToken struct {
	Env  string `json:"env"`
	Role string `json:"role"`
	Name string `json:"name"`
}

// EnvTokenInfo describes an environment token; Token, the credential
// itself, is in the answer to its creation alone: only its hash is kept.
type EnvTokenInfo struct {
	Env  string `json:"env"`
	Name string `json:"name"`
	Role string `json:"role"`
	// ID is the start of the token's hash: it names the token in a
	// revoke without the token.
	ID      string `json:"id"`
	Created uint64 `json:"created"`
	Token   string `json:"token,omitempty"`
}

// tokenIDLen is how many hex digits of a token's hash its id shows.
const tokenIDLen = 16

// envsAPI serves environment management and environment tokens.
type envsAPI struct {
	node Node
	log  hclog.Logger
}

func (s *envsAPI) routes(mux *router) {
	mux.HandleFunc("POST /v1/envs", s.add)
	mux.HandleFunc("GET /v1/envs", s.list)
	mux.HandleFunc("GET /v1/envs/{env}", s.show)
	mux.HandleFunc("DELETE /v1/envs/{env}", s.remove)
	mux.HandleFunc("POST /v1/tokens", s.createToken)
	mux.HandleFunc("GET /v1/tokens", s.tokens)
	mux.HandleFunc("DELETE /v1/tokens/{token}", s.revokeToken)
}

// leveled refuses environment changes on a cluster whose level predates
// them, saying how to raise it.
func (s *envsAPI) leveled(w http.ResponseWriter, what string) bool {
	if l := s.node.ClusterLevel().Level; l < model.LevelRecorded {
		writeKind(w, fault.KindRefused, "%s: the cluster runs feature level %d and environments need level %d; upgrade every server, then run `fixpoint cluster upgrade`", what, l, model.LevelRecorded)
		return false
	}
	return true
}

func (s *envsAPI) add(w http.ResponseWriter, r *http.Request) {
	var req NewEnv
	if !decode(w, r, &req) {
		return
	}
	if err := model.CheckName(model.KindEnv, req.Name); err != nil {
		writeKind(w, fault.KindBadRequest, "add environment: %v", err)
		return
	}
	if req.MaxUnits < 0 || req.MaxUnits > model.CeilingLimits.Units || req.MaxServices < 0 || req.MaxServices > model.CeilingLimits.Services {
		writeKind(w, fault.KindBadRequest, "add environment %s: max_units %d and max_services %d; each must be between 0 (the cluster's limit) and its ceiling (%d units, %d services)",
			req.Name, req.MaxUnits, req.MaxServices, model.CeilingLimits.Units, model.CeilingLimits.Services)
		return
	}
	if !s.leveled(w, "add environment "+req.Name) {
		return
	}
	var share *model.EnvShare
	if req.MaxUnits > 0 || req.MaxServices > 0 {
		share = &model.EnvShare{Units: req.MaxUnits, Services: req.MaxServices}
	}
	if _, err := s.node.AddEnv(r.Context(), req.Name, share); err != nil {
		writeStoreError(w, err, "")
		return
	}
	s.log.Info("added environment", "env", req.Name, "principal", principalOf(r).String())
	// A follower answers once it applied the env-add it passed on.
	if err := s.node.Linearize(r.Context()); err != nil {
		writeError(w, http.StatusServiceUnavailable, "environment %s was added, but this node could not catch up to show it: %v; see it with `fixpoint env show %s`", req.Name, err, req.Name)
		return
	}
	s.answerEnv(w, r, http.StatusCreated, req.Name)
}

func (s *envsAPI) list(w http.ResponseWriter, r *http.Request) {
	if !s.fresh(w, r) {
		return
	}
	var out []EnvInfo
	_ = s.node.ViewCluster(func(c *model.Cluster) error {
		out = append(out, envInfo(c, ""))
		for _, name := range c.Names() {
			out = append(out, envInfo(c, name))
		}
		return nil
	})
	writeJSON(w, http.StatusOK, out)
}

func (s *envsAPI) show(w http.ResponseWriter, r *http.Request) {
	if s.fresh(w, r) {
		s.answerEnv(w, r, http.StatusOK, r.PathValue("env"))
	}
}

// fresh makes a read linearizable unless ?stale.
func (s *envsAPI) fresh(w http.ResponseWriter, r *http.Request) bool {
	if r.URL.Query().Has("stale") {
		return true
	}
	if err := s.node.Linearize(r.Context()); err != nil {
		writeError(w, http.StatusServiceUnavailable, "linearizable read: %v (add ?stale to read this node's copy)", err)
		return false
	}
	return true
}

// answerEnv answers with the environment named name, 404 when none is.
func (s *envsAPI) answerEnv(w http.ResponseWriter, r *http.Request, code int, name string) {
	var info *EnvInfo
	var missing error
	_ = s.node.ViewCluster(func(c *model.Cluster) error {
		key, ok := envKey(c, name)
		if !ok {
			_, missing = c.State(name)
			return nil
		}
		i := envInfo(c, key)
		info = &i
		return nil
	})
	if info == nil {
		writeKind(w, fault.KindNotFound, "%v", missing)
		return
	}
	writeJSON(w, code, info)
}

// envKey is how the cluster keys the environment called name: "" for
// the default one.
func envKey(c *model.Cluster, name string) (string, bool) {
	if name == "" || name == c.Default.Name {
		return "", true
	}
	_, ok := c.Envs[name]
	return name, ok
}

// envInfo describes the environment keyed key ("" the default).
func envInfo(c *model.Cluster, key string) EnvInfo {
	if key == "" {
		st := c.Default
		return EnvInfo{Name: st.Name, UUID: c.DefaultUUID, Default: true, Services: len(st.Services), Units: len(st.Units), Tokens: nonNil(c.TokensOf(""))}
	}
	e := c.Envs[key]
	i := EnvInfo{Name: e.Name, UUID: e.UUID, Services: len(e.State.Services), Units: len(e.State.Units), Created: e.Created, Tokens: nonNil(c.TokensOf(key))}
	if e.Share != nil {
		i.MaxUnits, i.MaxServices = e.Share.Units, e.Share.Services
	}
	return i
}

// createToken mints an environment token, replicates its hash and shows
// the token once.
func (s *envsAPI) createToken(w http.ResponseWriter, r *http.Request) {
	var req NewEnvToken
	if !decode(w, r, &req) {
		return
	}
	if req.Name == "" {
		req.Name = req.Role + "-" + time.Now().UTC().Format("20060102-150405")
	}
	if !s.leveled(w, "create token "+model.Quote(req.Name, 72)) {
		return
	}
	key, err := s.tokenEnv(req.Env)
	if err != nil {
		writeKind(w, fault.KindNotFound, "create token %s: %v", model.Quote(req.Name, 72), err)
		return
	}
	token := NewToken()
	tc := &model.TokenCreate{Hash: HashToken(token), Env: key, Name: req.Name, Role: req.Role}
	cmd := &model.Command{Op: model.OpTokenCreate, TokenCreate: tc}
	if _, err := cmd.Check(); err != nil {
		writeKind(w, fault.KindBadRequest, "create token: %v", err)
		return
	}
	resp, err := s.applyCluster(r, cmd)
	if err != nil {
		writeStoreError(w, err, "create token "+req.Name)
		return
	}
	s.log.Info("created environment token", "env", req.Env, "name", req.Name, "role", req.Role, "principal", principalOf(r).String())
	writeJSON(w, http.StatusCreated, EnvTokenInfo{Env: req.Env, Name: req.Name, Role: req.Role, ID: tc.Hash[:tokenIDLen], Created: resp.Index, Token: token})
}

// tokenEnv is the key of the environment a token request names: "" for
// the default one, by no name or by its own.
func (s *envsAPI) tokenEnv(env string) (string, error) {
	var key string
	var err error
	_ = s.node.ViewCluster(func(c *model.Cluster) error {
		var ok bool
		if key, ok = envKey(c, env); !ok {
			_, err = c.State(env)
		}
		return nil
	})
	return key, err
}

// applyCluster judges a command of the cluster's on the applied cluster,
// then proposes it.
func (s *envsAPI) applyCluster(r *http.Request, cmd *model.Command) (*model.Response, error) {
	noop, err := model.AdmitClusterOn(r.Context(), s.node, cmd, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	if noop != nil {
		return noop, nil
	}
	cmd.Time = time.Now().UnixNano()
	return s.node.Apply(r.Context(), cmd)
}

func (s *envsAPI) tokens(w http.ResponseWriter, r *http.Request) {
	if !s.fresh(w, r) {
		return
	}
	env := r.URL.Query().Get("env")
	all := !r.URL.Query().Has("env")
	out := []EnvTokenInfo{}
	_ = s.node.ViewCluster(func(c *model.Cluster) error {
		key, _ := envKey(c, env)
		for h, t := range c.Tokens {
			if all || t.Env == key {
				out = append(out, EnvTokenInfo{Env: envName(c, t.Env), Name: t.Name, Role: t.Role, ID: h[:tokenIDLen], Created: t.Created})
			}
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].Env != out[j].Env {
			return out[i].Env < out[j].Env
		}
		return out[i].Name < out[j].Name
	})
	writeJSON(w, http.StatusOK, out)
}

// envName is the name an environment keyed key goes by.
func envName(c *model.Cluster, key string) string {
	if key == "" {
		return c.Default.Name
	}
	return key
}

// revokeToken revokes the token named by its name (in ?env, the default
// environment without) or by its id (EnvTokenInfo.ID).
func (s *envsAPI) revokeToken(w http.ResponseWriter, r *http.Request) {
	ref := r.PathValue("token")
	env := r.URL.Query().Get("env")
	if !s.leveled(w, "revoke token "+model.Quote(ref, 72)) {
		return
	}
	key, err := s.tokenEnv(env)
	if err != nil {
		writeKind(w, fault.KindNotFound, "revoke token %s: %v", model.Quote(ref, 72), err)
		return
	}
	name := ref
	if len(ref) == tokenIDLen && !strings.ContainsFunc(ref, func(c rune) bool { return !strings.ContainsRune("0123456789abcdef", c) }) {
		_ = s.node.ViewCluster(func(c *model.Cluster) error {
			for h, t := range c.Tokens {
				if strings.HasPrefix(h, ref) {
					name, key = t.Name, t.Env
				}
			}
			return nil
		})
	}
	cmd := &model.Command{Op: model.OpTokenRevoke, TokenRevoke: &model.TokenRevoke{Env: key, Name: name}}
	if _, err := cmd.Check(); err != nil {
		writeKind(w, fault.KindBadRequest, "revoke token: %v", err)
		return
	}
	if _, err := s.applyCluster(r, cmd); err != nil {
		writeStoreError(w, err, "revoke token "+ref)
		return
	}
	s.log.Info("revoked environment token", "env", env, "name", name, "principal", principalOf(r).String())
	w.WriteHeader(http.StatusNoContent)
}
