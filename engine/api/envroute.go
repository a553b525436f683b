package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/model/fault"
)

// Every environment-scoped route (scope.go's envRoutes) also answers under
// /v1/envs/{env}/... (docs/environments.md, part C): the router registers
// the prefixed pattern beside the unprefixed one, with inEnv in front of
// the handler. inEnv finds the environment (404, listing them, when there
// is none of that name) and puts it in the request's context; handlers
// take their store as nodeFor(r, ...) and their controller as
// ctlFor(r, ...). The unprefixed routes are the default environment's,
// so a client that never names one (v0.3.0's, up's) is served alike.

// envPrefix starts every prefixed route.
const envPrefix = "/v1/envs/"

// Controllers gives each environment's engine controller by name ("" the
// default environment's); engine/fleet.Fleet provides it. Sync brings a
// fleet in line with the environments applied, for a request that names
// one added a moment ago; Envs is what the metrics label.
type Controllers interface {
	Controller(name string) *engine.Controller
	Sync() error
	// Envs lists the environments it runs a controller for, the default
	// one ("") first.
	Envs() []string
}

// prefixed is the pattern an environment-scoped pattern has under the
// environment prefix: "GET /v1/status" is "GET /v1/envs/{env}/status".
func prefixed(pattern string) string {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		path, method = pattern, ""
	}
	p := envPrefix + "{env}/" + strings.TrimPrefix(path, "/v1/")
	if method == "" {
		return p
	}
	return method + " " + p
}

// splitEnvPath returns the environment a prefixed path names and the path
// without the prefix; ok is false for a path without one (GET
// /v1/envs/{env} itself is not prefixed: nothing follows its name).
func splitEnvPath(path string) (env, rest string, ok bool) {
	tail, found := strings.CutPrefix(path, envPrefix)
	if !found {
		return "", path, false
	}
	env, rest, found = strings.Cut(tail, "/")
	if !found || env == "" || rest == "" {
		return "", path, false
	}
	return env, "/v1/" + rest, true
}

// unprefixedPath is path without its environment prefix, if any.
func unprefixedPath(path string) string {
	_, rest, _ := splitEnvPath(path)
	return rest
}

// routeEnv is what inEnv found for a prefixed request.
type routeEnv struct {
	// name is the environment's, "" for the default one (also when the
	// request named it by its name).
	name string
	node Node
	// ctl is nil on a node whose fleet runs no controller for it.
	ctl *engine.Controller
}

type routeEnvKey struct{}

// envOf is the environment the request is routed to, "" the default.
func envOf(r *http.Request) string {
	if e, ok := r.Context().Value(routeEnvKey{}).(*routeEnv); ok {
		return e.name
	}
	return ""
}

// nodeFor is the store of the request's environment: def for an
// unprefixed request or the default environment.
func nodeFor(r *http.Request, def Node) Node {
	if e, ok := r.Context().Value(routeEnvKey{}).(*routeEnv); ok && e.name != "" {
		return e.node
	}
	return def
}

// ctlFor is the controller of the request's environment: def for an
// unprefixed request or the default environment. It is nil when this
// node runs none for it (ctlOrFail answers then).
func ctlFor(r *http.Request, def *engine.Controller) *engine.Controller {
	if e, ok := r.Context().Value(routeEnvKey{}).(*routeEnv); ok && e.name != "" {
		return e.ctl
	}
	return def
}

// ctlOrFail is ctlFor, answering 503 itself when there is no controller.
func ctlOrFail(w http.ResponseWriter, r *http.Request, def *engine.Controller) *engine.Controller {
	ctl := ctlFor(r, def)
	if ctl == nil {
		writeKind(w, fault.KindUnavailable, "environment %s has no engine controller on this node yet (it was added a moment ago, or is being removed); try again", envOf(r))
	}
	return ctl
}

// inEnv routes a prefixed request to its environment.
func (s *Server) inEnv(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("env")
		canon, err := s.lookupEnv(name)
		if err != nil && !s.node.IsLeader() && s.catchUp.wait(r.Context()) == nil {
			// The environment may have been added through the leader a
			// moment ago, before this node applied it.
			canon, err = s.lookupEnv(name)
		}
		if err != nil {
			fault.Write(w, fault.From(err, fault.KindNotFound))
			return
		}
		e := &routeEnv{name: canon, node: s.node}
		if canon != "" {
			e.node = envNode{Node: s.node, env: canon}
			if s.envs != nil {
				e.ctl = s.envs.Controller(canon)
				if e.ctl == nil && s.envs.Sync() == nil {
					e.ctl = s.envs.Controller(canon)
				}
				if e.ctl != nil && s.metrics != nil {
					s.metrics.envs.observe(canon, e.ctl)
				}
			}
		}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), routeEnvKey{}, e)))
	})
}

// lookupEnv is the canonical name of environment name ("" for the
// default one, also named by its name), or an error listing them.
func (s *Server) lookupEnv(name string) (string, error) {
	canon := ""
	err := s.node.ViewCluster(func(c *model.Cluster) error {
		if _, err := c.State(name); err != nil {
			return fmt.Errorf("%w: %w", ErrNotFound, err)
		}
		if name != c.Default.Name {
			canon = name
		}
		return nil
	})
	return canon, err
}

// envNode is one environment's view of the node: View is that
// environment's State and Apply names it in every per-environment
// command (raftstore.EnvStore's rules); the rest is the node's.
type envNode struct {
	Node
	env string
}

// baseNode is the node under an environment's view: what a handler asks
// of the node's other interfaces (Diagnostics) is the node's.
func baseNode(n Node) Node {
	if e, ok := n.(envNode); ok {
		return e.Node
	}
	return n
}

// View runs fn with the environment's State; an environment removed
// since the request was routed is an error listing those that exist.
func (n envNode) View(fn func(st *model.State) error) error {
	return n.Node.ViewCluster(func(c *model.Cluster) error {
		st, err := c.State(n.env)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrNotFound, err)
		}
		return fn(st)
	})
}

// Apply proposes cmd in the environment; a command naming another one is
// refused.
func (n envNode) Apply(ctx context.Context, cmd *model.Command) (*model.Response, error) {
	if err := stampEnv(cmd, n.env); err != nil {
		return nil, err
	}
	return n.Node.Apply(ctx, cmd)
}

// fileInEnv refuses, as the FSM would refuse its deploy, a file named
// name planned in environment env ("" the default one): another
// environment's file, or, in the default one, a file naming another.
func fileInEnv(node Node, env, name string) error {
	var err error
	_ = node.ViewCluster(func(c *model.Cluster) error {
		switch _, other := c.Envs[name]; {
		case env == "" && other:
			err = fmt.Errorf("%w: the environment file names environment %s, which is not the default environment: apply it to that environment (-e %s)", ErrRefused, model.Quote(name, 72), name)
		case env != "" && name != env:
			err = fmt.Errorf("%w: the environment file names environment %s but is applied to environment %s: change its name, or apply it to the environment it names", ErrRefused, model.Quote(name, 72), model.Quote(env, 72))
		}
		return nil
	})
	return err
}

// stampEnv names env in cmd when cmd is a per-environment command.
func stampEnv(cmd *model.Command, env string) error {
	if cmd == nil || env == "" || !model.PerEnv(cmd.Op) {
		return nil
	}
	if cmd.Env != "" && cmd.Env != env {
		return fmt.Errorf("%w: %s command names environment %s, sent to environment %s's routes", ErrRefused, cmd.Op, model.Quote(cmd.Env, 72), model.Quote(env, 72))
	}
	cmd.Env = env
	return nil
}

// The route groups' in methods return the group as it serves the
// request's environment: itself for the default one, else a copy holding
// that environment's store (and controller). A handler starts with
// `s, ok := s.in(w, r)`; ok is false once in answered (no controller).

func (s *statusAPI) in(w http.ResponseWriter, r *http.Request) (*statusAPI, bool) {
	if envOf(r) == "" {
		return s, true
	}
	cp := *s
	cp.node, cp.ctl = nodeFor(r, s.node), ctlOrFail(w, r, s.ctl)
	return &cp, cp.ctl != nil
}

func (s *actionAPI) in(w http.ResponseWriter, r *http.Request) (*actionAPI, bool) {
	if envOf(r) == "" {
		return s, true
	}
	cp := *s
	cp.node, cp.ctl = nodeFor(r, s.node), ctlOrFail(w, r, s.ctl)
	return &cp, cp.ctl != nil
}

func (s *changeAPI) in(r *http.Request) *changeAPI {
	if envOf(r) == "" {
		return s
	}
	cp := *s
	cp.node = nodeFor(r, s.node)
	return &cp
}

func (s *envAPI) in(r *http.Request) *envAPI {
	if envOf(r) == "" {
		return s
	}
	cp := *s
	cp.node = nodeFor(r, s.node)
	return &cp
}

func (s *secretAPI) in(r *http.Request) *secretAPI {
	if envOf(r) == "" {
		return s
	}
	cp := *s
	cp.node = nodeFor(r, s.node)
	return &cp
}

func (s *diagAPI) in(r *http.Request) *diagAPI {
	if envOf(r) == "" {
		return s
	}
	cp := *s
	cp.node = nodeFor(r, s.node)
	return &cp
}
