package api

import (
	"context"
	"net/http"
	"net/url"
	"slices"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/model/fault"
)

// The operator's view of the Juju secrets: GET /v1/secrets lists them,
// GET /v1/secrets/{id} shows one; neither carries a value unless asked
// with ?reveal (operator only, logged), which opens them with this
// server's cluster key.

// SecretInfo is one secret as `fixpoint secrets` and `show-secret` show it.
type SecretInfo struct {
	ID string `json:"id"`
	// Owner is "unit web/0", "application db" or "user".
	Owner       string `json:"owner"`
	Label       string `json:"label,omitempty"`
	Description string `json:"description,omitempty"`
	Rotate      string `json:"rotate,omitempty"`
	// NextRotate is when a rotation is next due; RotateDue how many came
	// due.
	NextRotate string `json:"next_rotate,omitempty"`
	RotateDue  int    `json:"rotate_due,omitempty"`
	// Expire is when the latest revision expires.
	Expire string `json:"expire,omitempty"`
	// Created and Updated are when the secret was made and its owner last
	// changed it (RFC 3339, UTC); empty when the control plane recorded
	// no time (a cluster below feature level 2 when it was made).
	Created string `json:"created,omitempty"`
	Updated string `json:"updated,omitempty"`
	// Revision is the latest revision.
	Revision  int                  `json:"revision"`
	Revisions []SecretRevisionInfo `json:"revisions,omitempty"`
	Grants    []SecretGrantInfo    `json:"grants,omitempty"`
	Consumers []SecretConsumerInfo `json:"consumers,omitempty"`
	// Content is the latest revision's, with reveal only.
	Content map[string]string `json:"content,omitempty"`
}

// SecretRevisionInfo is one kept revision; Content with reveal only.
type SecretRevisionInfo struct {
	Revision int    `json:"revision"`
	Index    uint64 `json:"index"`
	// Expire is when the revision expires; ExpireDue how many times its
	// expiry came due.
	Expire    string `json:"expire,omitempty"`
	ExpireDue int    `json:"expire_due,omitempty"`
	// Created is when the revision was made; empty when no time was
	// recorded.
	Created string            `json:"created,omitempty"`
	Content map[string]string `json:"content,omitempty"`
}

// SecretGrantInfo is one grant: to a service or a unit, over a relation
// (-1: the operator's).
type SecretGrantInfo struct {
	To       string `json:"to"`
	Relation int    `json:"relation"`
}

// SecretConsumerInfo is one consumer: its label and the revision it reads.
type SecretConsumerInfo struct {
	Unit    string `json:"unit"`
	Label   string `json:"label,omitempty"`
	Tracked int    `json:"tracked"`
}

// secretAPI serves the operators' reads of the secrets (redacted unless
// revealed) and the rotation of the cluster key.
type secretAPI struct {
	node Node
	gate *gate
	log  hclog.Logger
}

func (s *secretAPI) routes(mux *router) {
	mux.HandleFunc("GET /v1/secrets", s.secrets)
	mux.HandleFunc("GET /v1/secrets/{id}", s.secret)
	mux.HandleFunc("POST /v1/secrets/rotate-key", s.rotateKey)
}

// keyRotator is the node that can rotate the cluster key
// (raftstore.Store).
type keyRotator interface {
	RotateSecretsKey(ctx context.Context) (string, error)
}

// rotateKey is POST /v1/secrets/rotate-key: a new cluster key, every
// secret sealed again under it. It answers {"key": ID}.
func (s *secretAPI) rotateKey(w http.ResponseWriter, r *http.Request) {
	kr, ok := s.node.(keyRotator)
	if !ok {
		writeKind(w, fault.KindUnavailable, "this node can not rotate the cluster key")
		return
	}
	id, err := kr.RotateSecretsKey(r.Context())
	if err != nil {
		writeKind(w, fault.KindUnavailable, "%v", err)
		return
	}
	s.log.Info("rotated the cluster key", "key", id, "principal", principalOf(r).String())
	writeCompact(w, http.StatusOK, map[string]string{"key": id})
}

// NewSecretInfo describes s, with its revisions when revisions; values
// only when sl is given (a reveal), opened with it.
func NewSecretInfo(s *model.Secret, revisions bool, sl model.Sealer) (*SecretInfo, error) {
	info := &SecretInfo{ID: s.URI(), Owner: s.OwnerKind, Label: s.Label, Description: s.Description, Rotate: s.Rotate, Revision: s.Latest()}
	if s.Owner != "" {
		info.Owner += " " + s.Owner
	}
	info.Expire, info.NextRotate, info.RotateDue = model.SecretTime(s.LatestExpire()), model.SecretTime(s.NextRotate), s.RotateDue
	info.Created, info.Updated = model.SecretTime(s.CreatedAt), model.SecretTime(s.UpdatedAt)
	for _, who := range sortedNames(s.Grants) {
		info.Grants = append(info.Grants, SecretGrantInfo{To: who, Relation: s.Grants[who].Relation})
	}
	for _, who := range sortedNames(s.Consumers) {
		c := s.Consumers[who]
		info.Consumers = append(info.Consumers, SecretConsumerInfo{Unit: who, Label: c.Label, Tracked: c.Tracked})
	}
	for _, r := range s.Revisions {
		ri := SecretRevisionInfo{Revision: r.Rev, Index: r.Index, Expire: model.SecretTime(r.Expire), ExpireDue: r.ExpireDue, Created: model.SecretTime(r.CreatedAt)}
		if sl != nil && (revisions || r.Rev == s.Latest()) {
			content, err := model.OpenContent(sl, s.ID, r.Sealed)
			if err != nil {
				return nil, err
			}
			ri.Content = content
			if r.Rev == s.Latest() {
				info.Content = content
			}
		}
		if revisions {
			info.Revisions = append(info.Revisions, ri)
		}
	}
	return info, nil
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// secrets is GET /v1/secrets: every secret's metadata, never a value.
func (s *secretAPI) secrets(w http.ResponseWriter, r *http.Request) {
	s = s.in(r)
	if !s.gate.read(w, r) {
		return
	}
	out := []*SecretInfo{}
	_ = s.node.View(func(st *model.State) error {
		for _, id := range sortedNames(st.Secrets) {
			info, _ := NewSecretInfo(st.Secrets[id], false, nil)
			out = append(out, info)
		}
		return nil
	})
	writeCompact(w, http.StatusOK, out)
}

// secret is GET /v1/secrets/{id}[?revisions=1][&reveal=1].
func (s *secretAPI) secret(w http.ResponseWriter, r *http.Request) {
	s = s.in(r)
	id, err := model.ParseSecretURI(r.PathValue("id"))
	if err != nil {
		writeKind(w, fault.KindBadRequest, "%v", err)
		return
	}
	reveal, ok := reveal(s.log, w, r)
	if !ok || !s.gate.read(w, r) {
		return
	}
	var info *SecretInfo
	found := false
	_ = s.node.View(func(st *model.State) error {
		sec := st.Secrets[id]
		if sec == nil {
			return nil
		}
		found = true
		var sl model.Sealer
		if reveal {
			sl = st.Sealer()
			if sl == nil {
				err = model.ErrNoSealer
				return nil
			}
		}
		info, err = NewSecretInfo(sec, r.URL.Query().Has("revisions"), sl)
		return nil
	})
	switch {
	case !found:
		writeKind(w, fault.KindNotFound, "secret:%s not found (fixpoint secrets lists them)", id)
	case err != nil:
		writeKind(w, fault.KindUnavailable, "%v", err)
	default:
		writeCompact(w, http.StatusOK, info)
	}
}

// Secrets lists the secrets' metadata (GET /v1/secrets).
func (c *OperatorClient) Secrets(ctx context.Context) ([]*SecretInfo, error) {
	var out []*SecretInfo
	_, err := c.do(ctx, http.MethodGet, "/v1/secrets", nil, &out)
	return out, err
}

// Secret shows one secret (GET /v1/secrets/ID), its revisions when asked;
// its values when the client reveals.
func (c *OperatorClient) Secret(ctx context.Context, id string, revisions bool) (*SecretInfo, error) {
	var out SecretInfo
	path := "/v1/secrets/" + url.PathEscape(id)
	if revisions {
		path += "?revisions=1"
	}
	_, err := c.do(ctx, http.MethodGet, c.withReveal(path), nil, &out)
	return &out, err
}

// RotateSecretsKey rotates the cluster key (POST /v1/secrets/rotate-key)
// and returns the new key's id.
func (c *OperatorClient) RotateSecretsKey(ctx context.Context) (string, error) {
	var out struct {
		Key string `json:"key"`
	}
	_, err := c.do(ctx, http.MethodPost, "/v1/secrets/rotate-key", []byte("{}"), &out)
	return out.Key, err
}
