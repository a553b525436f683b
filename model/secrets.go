package model

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Juju secrets, as Juju 3 models them: a secret has an owner (a unit, a
// service whose leader manages it, or the operator for a user secret),
// revisions of content, a label per owner and per consumer, and grants
// that follow a relation. The content of every revision is sealed under
// the cluster key (Sealer) before it is proposed: the log, snapshots and
// backups hold only Sealed strings.

// Owner kinds of a secret.
const (
	SecretOwnerUnit = "unit"
	SecretOwnerApp  = "application"
	// SecretOwnerUser is a secret the operator declared in the
	// environment file (Juju's add-secret).
	SecretOwnerUser = "user"
)

// Rotate policies, as Juju's core/secrets.RotatePolicy.
var SecretRotatePolicies = []string{"never", "hourly", "daily", "weekly", "monthly", "quarterly", "yearly"}

// Bounds on secrets, checked before a command is proposed and by the FSM.
const (
	// MaxSecretValue caps one value of a secret's content, as Juju's
	// secret-add does.
	MaxSecretValue = 8 << 10
	// MaxSecretContent caps a revision's content, keys and values, as
	// Juju caps it.
	MaxSecretContent = 64 << 10
	// MaxSecretKeys caps the keys of one revision's content.
	MaxSecretKeys = 64
	// MaxSecretLabel caps a label, in bytes.
	MaxSecretLabel = 256
	// MaxSecretDescription caps a description, in bytes.
	MaxSecretDescription = 1 << 10
	// MaxSecretChanges caps the secret changes one result carries.
	MaxSecretChanges = 64
	// MaxSecretRevisions caps the revisions a secret keeps: an owner that
	// never removes old ones is refused new ones past it.
	MaxSecretRevisions = 100
	// MaxSecretsPerOwner caps the secrets one unit or service owns.
	MaxSecretsPerOwner = 1000
	// maxSealed bounds a sealed content: the content, its encoding and
	// the cipher's overhead.
	maxSealed = 2*MaxSecretContent + 1024
)

// SecretIDLen is the length of a secret id: 20 characters of xid's
// alphabet, as Juju's.
const SecretIDLen = 20

const secretIDAlphabet = "0123456789abcdefghijklmnopqrstuv"

// secretKeyRE is Juju's rule for a content key: lower case, starting with
// a letter, at least three characters, single hyphens between.
var secretKeyRE = regexp.MustCompile(`^[a-z](?:-?[a-z0-9]){2,}$`)

// Secret is one secret in the state. Secrets are replaced whole, never
// edited in place, so that a snapshot's Clone may share them.
type Secret struct {
	ID string `json:"id"`
	// OwnerKind is SecretOwnerUnit, SecretOwnerApp or SecretOwnerUser;
	// Owner is the unit or service name ("" for a user secret).
	OwnerKind   string `json:"owner_kind"`
	Owner       string `json:"owner,omitempty"`
	Label       string `json:"label,omitempty"`
	Description string `json:"description,omitempty"`
	Rotate      string `json:"rotate,omitempty"`
	// NextRotate, RotateDue and RotateRev are the rotation schedule
	// (secrets_due.go): when a rotation is next due (unix nanoseconds, 0
	// for none), how many came due, and the latest revision when the last
	// one did (0 once the owner answered it with a new revision).
	NextRotate int64 `json:"next_rotate,omitempty"`
	RotateDue  int   `json:"rotate_due,omitempty"`
	RotateRev  int   `json:"rotate_rev,omitempty"`
	// Revisions are kept in increasing order.
	Revisions []SecretRevision `json:"revisions"`
	// Grants maps a grantee, a service name or a unit name, to the
	// relation the grant follows.
	Grants map[string]SecretGrant `json:"grants,omitempty"`
	// Consumers maps each consumer unit to its label and tracked revision.
	Consumers map[string]SecretConsumer `json:"consumers,omitempty"`
	Created   uint64                    `json:"created"`
	Index     uint64                    `json:"index"`
	// CreatedAt and UpdatedAt are the wall-clock times (unix
	// nanoseconds, the proposer's clock) the secret was made and its
	// owner last changed it; 0 when the command recorded none
	// (Command.SecretTimes).
	CreatedAt int64 `json:"created_at,omitempty"`
	UpdatedAt int64 `json:"updated_at,omitempty"`
}

// SecretRevision is one revision's content, sealed.
type SecretRevision struct {
	Rev    int    `json:"rev"`
	Sealed string `json:"sealed"`
	// Index is the entry that created it.
	Index uint64 `json:"index"`
	// Expire is when the revision expires (unix nanoseconds, 0: never);
	// ExpireDue counts the times its expiry came due and ExpiredAt is
	// when it last did (secrets_due.go).
	Expire    int64 `json:"expire,omitempty"`
	ExpireDue int   `json:"expire_due,omitempty"`
	ExpiredAt int64 `json:"expired_at,omitempty"`
	// CreatedAt is when the revision was made (unix nanoseconds, the
	// proposer's clock); 0 when the command recorded none.
	CreatedAt int64 `json:"created_at,omitempty"`
}

// SecretGrant is a grant; Relation is -1 for an operator's grant, which
// follows no relation.
type SecretGrant struct {
	Relation int `json:"relation"`
}

// SecretConsumer is what one consumer unit keeps of a secret.
type SecretConsumer struct {
	Label string `json:"label,omitempty"`
	// Tracked is the revision the consumer reads; 0 until its first read.
	Tracked int `json:"tracked,omitempty"`
}

// Latest is the secret's latest revision number, 0 when it has none.
func (s *Secret) Latest() int {
	if len(s.Revisions) == 0 {
		return 0
	}
	return s.Revisions[len(s.Revisions)-1].Rev
}

// Revision returns revision rev, or nil.
func (s *Secret) Revision(rev int) *SecretRevision {
	for i := range s.Revisions {
		if s.Revisions[i].Rev == rev {
			return &s.Revisions[i]
		}
	}
	return nil
}

// Obsolete lists the revisions below the latest that no consumer tracks:
// their owner gets secret-remove for each.
func (s *Secret) Obsolete() []int {
	latest := s.Latest()
	var out []int
	for _, r := range s.Revisions {
		if r.Rev == latest {
			continue
		}
		tracked := false
		for _, c := range s.Consumers {
			tracked = tracked || c.Tracked == r.Rev
		}
		if !tracked {
			out = append(out, r.Rev)
		}
	}
	return out
}

// URI is the secret's id as hooks see it, "secret:<id>".
func (s *Secret) URI() string { return "secret:" + s.ID }

// ParseSecretURI returns the id of "secret:<id>", "secret://<model>/<id>"
// or a bare id, checked.
func ParseSecretURI(s string) (string, error) {
	id := s
	switch {
	case strings.HasPrefix(s, "secret://"):
		rest := strings.TrimPrefix(s, "secret://")
		if i := strings.LastIndexByte(rest, '/'); i >= 0 {
			id = rest[i+1:]
		}
	case strings.HasPrefix(s, "secret:"):
		id = strings.TrimPrefix(s, "secret:")
	}
	if err := CheckSecretID(id); err != nil {
		return "", fmt.Errorf("secret URI %s: %w", Quote(s, 48), err)
	}
	return id, nil
}

// CheckSecretID checks a bare secret id.
func CheckSecretID(id string) error {
	if len(id) != SecretIDLen {
		return fmt.Errorf("a secret id is %d characters of 0-9 and a-v, as \"secret:cn0gqa6qs7s1bm0kfp8g\"", SecretIDLen)
	}
	for i := 0; i < len(id); i++ {
		if !strings.ContainsRune(secretIDAlphabet, rune(id[i])) {
			return fmt.Errorf("a secret id is %d characters of 0-9 and a-v, as \"secret:cn0gqa6qs7s1bm0kfp8g\"", SecretIDLen)
		}
	}
	return nil
}

// NewSecretID makes a secret id from 13 random bytes (rand fills them).
func NewSecretID(rand func([]byte) error) (string, error) {
	var b [13]byte
	if err := rand(b[:]); err != nil {
		return "", fmt.Errorf("make a secret id: %w", err)
	}
	out := make([]byte, SecretIDLen)
	acc, bits, j := uint32(0), 0, 0
	for _, c := range b {
		acc = acc<<8 | uint32(c)
		bits += 8
		for bits >= 5 && j < SecretIDLen {
			bits -= 5
			out[j] = secretIDAlphabet[(acc>>bits)&31]
			j++
		}
	}
	return string(out), nil
}

// CheckSecretContent checks a revision's content: Juju's key rule, each
// value at most MaxSecretValue bytes, all of it at most MaxSecretContent.
// The error names the key, never a value.
func CheckSecretContent(content map[string]string) error {
	if len(content) == 0 {
		return fmt.Errorf("empty secret content: give at least one key=value")
	}
	if len(content) > MaxSecretKeys {
		return fmt.Errorf("%d keys in one secret; the limit is %d", len(content), MaxSecretKeys)
	}
	size := 0
	for _, k := range sortedKeys(content) {
		if !secretKeyRE.MatchString(k) {
			return fmt.Errorf("secret key %s: keys are at least 3 characters of a-z, 0-9 and single hyphens, starting with a letter", Quote(k, 32))
		}
		if len(content[k]) > MaxSecretValue {
			return fmt.Errorf("secret key %s: value of %d bytes; the limit is %d", k, len(content[k]), MaxSecretValue)
		}
		size += len(k) + len(content[k])
	}
	if size > MaxSecretContent {
		return fmt.Errorf("secret content of %d bytes; the limit is %d", size, MaxSecretContent)
	}
	return nil
}

// CheckSecretLabel checks a label or a description against max bytes.
func CheckSecretLabel(what, s string, max int) error {
	if len(s) > max || !utf8.ValidString(s) || strings.ContainsFunc(s, isControl) {
		return fmt.Errorf("secret %s %s: at most %d bytes of printable UTF-8", what, Quote(s, 32), max)
	}
	return nil
}

// CheckRotatePolicy checks a rotate policy ("" leaves it unset).
func CheckRotatePolicy(p string) error {
	if p == "" || slices.Contains(SecretRotatePolicies, p) {
		return nil
	}
	return fmt.Errorf("rotate policy %s: use %s", Quote(p, 24), orList(SecretRotatePolicies))
}

// SecretSees reports whether unit (of service svc) may read secret s in
// st: it owns it (its own, or its service's), or holds a live grant.
func (st *State) SecretSees(s *Secret, unit, svc string) bool {
	switch {
	case s.OwnerKind == SecretOwnerUnit && s.Owner == unit:
		return true
	case s.OwnerKind == SecretOwnerApp && s.Owner == svc:
		return true
	}
	for _, who := range []string{unit, svc} {
		if g, ok := s.Grants[who]; ok && st.grantLive(g) {
			return true
		}
	}
	return false
}

// Owns reports whether unit (of svc) owns s.
func (s *Secret) Owns(unit, svc string) bool {
	return s.OwnerKind == SecretOwnerUnit && s.Owner == unit || s.OwnerKind == SecretOwnerApp && s.Owner == svc
}

// grantLive reports whether a grant still holds: an operator's always,
// a charm's while its relation is alive.
func (st *State) grantLive(g SecretGrant) bool {
	if g.Relation < 0 {
		return true
	}
	r := st.Relations[g.Relation]
	return r != nil && r.Life == Alive
}

// VisibleSecrets lists, sorted by id, the Juju secrets unit (of svc) may
// read. It reads the audience index: its cost is what the unit may see,
// not the state's every secret.
func (st *State) VisibleSecrets(unit, svc string) []*Secret {
	var out []*Secret
	for _, id := range st.secretCandidates(unit, svc) {
		if s := st.Secrets[id]; s != nil && st.SecretSees(s, unit, svc) {
			out = append(out, s)
		}
	}
	return out
}

// secretAudience lists the units and services whose universes show s:
// its owner and grantees (a unit or a whole service).
func secretAudience(s *Secret) []string {
	var out []string
	if s.Owner != "" {
		out = append(out, s.Owner)
	}
	for who := range s.Grants {
		out = append(out, who)
	}
	for who := range s.Consumers {
		out = append(out, who)
	}
	return out
}
