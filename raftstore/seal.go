package raftstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/keyring"
)

// KeyFile is the cluster key's file in a server's data dir.
const KeyFile = keyring.KeyFile

// RotateSecretsKey makes a new cluster key and replicates it: the entry
// carries it sealed under the current key, which every server holds and
// opens it with, and every secret's revisions sealed again under it. The
// proposer keeps it only when the entry applies, as every server does.
// It returns the new key's id.
func (s *Store) RotateSecretsKey(ctx context.Context) (string, error) {
	if s.keys.Empty() {
		return "", errors.New("rotate the cluster key: this server holds none; ask another server")
	}
	id, key, err := s.keys.NewKey()
	if err != nil {
		return "", err
	}
	wrapped, err := s.keys.Seal(model.KeyAAD(id), key)
	if err != nil {
		return "", fmt.Errorf("rotate the cluster key: %w", err)
	}
	next := keyring.Only(id, key)
	var reseal map[string][]string
	err = s.View(func(st *model.State) error {
		var err error
		reseal, err = st.ResealAll(s.keys, next)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("rotate the cluster key: %w", err)
	}
	cmd := &model.Command{Op: model.OpClusterKey, ClusterKey: &model.ClusterKey{ID: id, Wrapped: wrapped, Reseal: reseal}}
	if _, err := s.Apply(ctx, cmd); err != nil {
		return "", fmt.Errorf("rotate the cluster key: %w", err)
	}
	return id, nil
}

// adoptKey keeps the key a rotation entry carries, opened with a key this
// server holds; a server that can not open it logs why and goes on (the
// state applies alike everywhere).
func (f *fsm) adoptKey(k *model.ClusterKey) {
	kr, ok := f.sealer.(*keyring.Keyring)
	if !ok || kr == nil {
		return
	}
	key, err := kr.Open(model.KeyAAD(k.ID), k.Wrapped)
	if err == nil {
		err = kr.AddKey(k.ID, key)
	}
	if err != nil {
		f.log.Error("cannot keep the rotated cluster key: secrets sealed under it will not open here; copy "+KeyFile+" from a server that has it", "key", k.ID, "error", err)
	}
}
