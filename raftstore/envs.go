package raftstore

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/fixpoint/fixpoint/model"
)

// ViewCluster runs fn with every environment under the read lock, as View
// does with the default one; the same rules hold for fn.
func (s *Store) ViewCluster(fn func(c *model.Cluster) error) error {
	if h := s.fsm.haltedAt(); h != nil {
		return h
	}
	s.fsm.mu.RLock()
	defer s.fsm.mu.RUnlock()
	return fn(s.fsm.cluster)
}

// EnvStore is one environment's view of the store: what engine.Store
// asks (View, Apply, WaitIndex, Index) and engine.InFlight, so that a
// controller per environment runs as the one controller runs on
// Store.View today. Its View is that environment's State; its Apply names
// the environment in every per-environment command and leaves the
// cluster's commands (machines' liveness) as they are. Indexes are the
// store's: every environment's State.Index is the log's.
type EnvStore struct {
	s    *Store
	name string
}

// Env returns the named environment's view; "" is the default
// environment, whose commands carry no name and so apply on a cluster of
// any feature level.
func (s *Store) Env(name string) *EnvStore { return &EnvStore{s: s, name: name} }

// Name is the environment's name as given to Env.
func (e *EnvStore) Name() string { return e.name }

// View runs fn with the environment's State under the store's read lock
// (Store.View's rules); an environment that does not exist is an error
// that lists those that do.
func (e *EnvStore) View(fn func(st *model.State) error) error {
	return e.s.ViewCluster(func(c *model.Cluster) error {
		st, err := c.State(e.name)
		if err != nil {
			return err
		}
		return fn(st)
	})
}

// Apply replicates cmd in this environment (Store.Apply). A command that
// names another environment is refused.
func (e *EnvStore) Apply(ctx context.Context, cmd *model.Command) (*model.Response, error) {
	if cmd != nil && model.PerEnv(cmd.Op) && e.name != "" {
		if cmd.Env != "" && cmd.Env != e.name {
			return nil, fmt.Errorf("%w: %s command names environment %s, sent through environment %s's view", ErrRefused, cmd.Op, model.Quote(cmd.Env, 72), model.Quote(e.name, 72))
		}
		cmd.Env = e.name
	}
	return e.s.Apply(ctx, cmd)
}

// WaitIndex is Store.WaitIndex: the environment's index is the store's.
func (e *EnvStore) WaitIndex(ctx context.Context, after uint64) (uint64, bool, error) {
	return e.s.WaitIndex(ctx, after)
}

// Changes is the environment's journal (Store.Changes); call it inside
// View.
func (e *EnvStore) Changes(since uint64) ([]model.Touched, bool) {
	return e.s.fsm.changes(e.name, since)
}

// Index is Store.Index.
func (e *EnvStore) Index() uint64 { return e.s.Index() }

// LastIndex is Store.LastIndex (engine.InFlight).
func (e *EnvStore) LastIndex() uint64 { return e.s.LastIndex() }

// Applied is Store.Applied (engine.InFlight).
func (e *EnvStore) Applied(index uint64) bool { return e.s.Applied(index) }

// Linearize is Store.Linearize, for a linearizable View.
func (e *EnvStore) Linearize(ctx context.Context) error { return e.s.Linearize(ctx) }

// AddEnv makes an environment named name, with share (nil: the cluster's
// limits), and returns its uuid. It is judged before it is proposed
// (model.Cluster.Admit): a name taken, the cluster's limit reached or a
// cluster whose feature level predates environments is refused with what
// to do. Adding one that exists with that uuid is a no-op.
func (s *Store) AddEnv(ctx context.Context, name string, share *model.EnvShare) (string, error) {
	uuid, err := newEnvUUID()
	if err != nil {
		return "", err
	}
	cmd := &model.Command{Op: model.OpEnvAdd, RequestID: newRequestID(), EnvAdd: &model.EnvAdd{Name: name, UUID: uuid, Share: share}}
	if err := s.applyEnvOp(ctx, cmd); err != nil {
		return "", fmt.Errorf("add environment %s: %w", model.Quote(name, 72), err)
	}
	return uuid, nil
}

// RemoveEnv drops the environment named name, which must hold no units,
// services or operations any more (model.EnvRemove).
func (s *Store) RemoveEnv(ctx context.Context, name string) error {
	cmd := &model.Command{Op: model.OpEnvRemove, RequestID: newRequestID(), EnvRemove: &model.EnvRemove{Name: name}}
	if err := s.applyEnvOp(ctx, cmd); err != nil {
		return fmt.Errorf("remove environment %s: %w", model.Quote(name, 72), err)
	}
	return nil
}

// applyEnvOp checks an environment's command, judges it on the applied
// cluster and proposes it.
func (s *Store) applyEnvOp(ctx context.Context, cmd *model.Command) error {
	bindRequest(cmd)
	if err := cmd.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrRefused, err)
	}
	noop, err := model.AdmitClusterOn(ctx, s, cmd, nil)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrRefused, err)
	}
	if noop != nil {
		return nil
	}
	_, err = s.Apply(ctx, cmd)
	return err
}

// defaultEnvUUID is a new uuid for the default environment while it has
// none, else "": the level record that rises carries it (levelRecord).
func (s *Store) defaultEnvUUID() string {
	var has bool
	_ = s.ViewCluster(func(c *model.Cluster) error {
		has = c.DefaultUUID != ""
		return nil
	})
	if has {
		return ""
	}
	uuid, err := newEnvUUID()
	if err != nil {
		// The default environment gets one from a later record.
		s.log.Warn("no uuid for the default environment", "error", err)
		return ""
	}
	return uuid
}

// newEnvUUID is a random (version 4) uuid.
func newEnvUUID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("make an environment uuid: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}
