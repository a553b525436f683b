package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore"
)

// Files in a node's data dir holding its tokens (mode 0600).
const (
	operatorTokenFile = "operator.token"
	joinTokenFile     = "join.token"
)

// credentials are a control plane's tokens as the bootstrap node made them.
type credentials struct {
	operator, join string
}

// loadCredentials reads the tokens in dataDir, making them when create is
// set and there are none; created says whether they are new.
func loadCredentials(dataDir string, create bool) (creds credentials, created bool, err error) {
	op, errOp := os.ReadFile(filepath.Join(dataDir, operatorTokenFile))
	join, errJoin := os.ReadFile(filepath.Join(dataDir, joinTokenFile))
	if errOp == nil && errJoin == nil {
		return credentials{strings.TrimSpace(string(op)), strings.TrimSpace(string(join))}, false, nil
	}
	if !create {
		return credentials{}, false, fmt.Errorf("no tokens in %s", dataDir)
	}
	creds = credentials{api.NewToken(), api.NewToken()}
	for file, tok := range map[string]string{operatorTokenFile: creds.operator, joinTokenFile: creds.join} {
		if err := os.WriteFile(filepath.Join(dataDir, file), []byte(tok+"\n"), 0o600); err != nil {
			return credentials{}, false, fmt.Errorf("write %s: %w", file, err)
		}
	}
	return creds, true, nil
}

// errCredentialsDiffer is the one answer of recordCredentials that
// retrying cannot change.
var errCredentialsDiffer = errors.New("the control plane's credentials differ from the tokens in this data dir; use the tokens it was bootstrapped with")

// recordCredentials makes the bootstrap node's tokens the control
// plane's, unless it already has credentials. The node's state must be
// caught up with the log first (recordAtStart): a state not yet replayed
// shows no credentials. A proposal that meets credentials set meanwhile
// is refused; the next look at the state judges them.
func recordCredentials(ctx context.Context, store *raftstore.Store, creds credentials) error {
	want := &model.Auth{Operator: api.HashToken(creds.operator), Join: api.HashToken(creds.join)}
	set := func() (bool, error) {
		var have *model.Auth
		_ = store.View(func(st *model.State) error {
			have = st.Auth
			return nil
		})
		// The join token may have been rotated since; the operator
		// token is what identifies the control plane's owner.
		if have != nil && have.Operator != want.Operator {
			return true, errCredentialsDiffer
		}
		return have != nil, nil
	}
	if done, err := set(); done || err != nil {
		return err
	}
	_, err := store.Apply(ctx, &model.Command{Op: model.OpAuth, Auth: want})
	if errors.Is(err, raftstore.ErrRefused) {
		// Set meanwhile: judged by what was set.
		if err := store.Linearize(ctx); err != nil {
			return fmt.Errorf("read the credentials set meanwhile: %w", err)
		}
		if done, err := set(); done || err != nil {
			return err
		}
	}
	if err != nil {
		return fmt.Errorf("apply the bootstrap node's credentials: %w", err)
	}
	return nil
}

// bearer adds a token to every request: how nodes talk to each other.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}
