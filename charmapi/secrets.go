package charmapi

import (
	"crypto/rand"
	"fmt"
)

// Secret is a Juju secret the unit owns (its own, or its service's) or
// was granted. Content is the revision the unit reads: the latest for an
// owner, the tracked one for a consumer.
type Secret struct {
	// ID is "secret:<id>", as Juju's hook tools print it.
	ID string `json:"id"`
	// Owner is "unit" or "application" when the unit's or its service's;
	// empty for a secret it consumes.
	Owner string `json:"owner,omitempty"`
	// Label is the owner's label for an owner, the unit's own for a
	// consumer.
	Label       string `json:"label,omitempty"`
	Description string `json:"description,omitempty"`
	// Expire is when the latest revision expires (RFC 3339).
	Expire string `json:"expire,omitempty"`
	Rotate string `json:"rotate,omitempty"`
	// Revision is the revision Content holds; 0 for a consumer that never
	// read the secret, which then reads the latest.
	Revision int `json:"revision"`
	// Latest is the latest revision.
	Latest  int               `json:"latest"`
	Content map[string]string `json:"content"`
	// LatestContent is the latest revision's content when a consumer
	// tracks an older one (secret-get --peek, --refresh).
	LatestContent map[string]string `json:"latest_content,omitempty"`
	// Revisions are an owner's kept revisions; Obsolete those of them no
	// consumer tracks any more.
	Revisions []int `json:"revisions,omitempty"`
	Obsolete  []int `json:"obsolete,omitempty"`
	// The schedule, for the owner that manages the secret (the unit, or
	// its service's leader). NextRotate is when a rotation is next due
	// (RFC 3339); RotateDue counts the rotations that came due, and moves
	// with each (the owner gets secret-rotate). Expired are the kept
	// revisions whose expiry came due; ExpireDue counts those
	// occurrences, and moves with each (the owner gets secret-expired).
	// An owner answers a rotation with a new revision, an expiry by
	// removing the revision.
	NextRotate string `json:"next_rotate,omitempty"`
	RotateDue  int    `json:"rotate_due,omitempty"`
	Expired    []int  `json:"expired,omitempty"`
	ExpireDue  int    `json:"expire_due,omitempty"`
}

// SecretChange is a change a result makes to a secret: Op "add" (ID new,
// Owner "unit" or "application", Content), "set" (new Content and/or
// metadata), "remove" (Revision, 0 for all), "grant"/"revoke" (Relation
// ident, Unit to name one unit of its remote service; a revoke may name
// App or Unit without a relation), or "track" (a
// consumer's Label and the Revision it now reads).
type SecretChange struct {
	Op          string            `json:"op"`
	ID          string            `json:"id"`
	Owner       string            `json:"owner,omitempty"`
	Label       *string           `json:"label,omitempty"`
	Description *string           `json:"description,omitempty"`
	Expire      *string           `json:"expire,omitempty"`
	Rotate      *string           `json:"rotate,omitempty"`
	Content     map[string]string `json:"content,omitempty"`
	Revision    int               `json:"revision,omitempty"`
	Relation    string            `json:"relation,omitempty"`
	Unit        string            `json:"unit,omitempty"`
	// App names the service a revoke without a relation takes the
	// secret from.
	App string `json:"app,omitempty"`
}

// NewSecretID returns a new secret id, "secret:" and 20 characters of
// xid's alphabet, for an "add" change.
func NewSecretID() (string, error) {
	const alphabet = "0123456789abcdefghijklmnopqrstuv"
	var b [20]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("make a secret id: %w", err)
	}
	for i := range b {
		b[i] = alphabet[b[i]&31]
	}
	return "secret:" + string(b[:]), nil
}

// Secret returns the secret with id ("secret:<id>") or, failing that,
// label, or nil.
func (u *Universe) Secret(idOrLabel string) *Secret {
	for i := range u.Secrets {
		if u.Secrets[i].ID == idOrLabel {
			return &u.Secrets[i]
		}
	}
	for i := range u.Secrets {
		if u.Secrets[i].Label != "" && u.Secrets[i].Label == idOrLabel {
			return &u.Secrets[i]
		}
	}
	return nil
}
