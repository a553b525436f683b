package model

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// User secrets, as Juju's add-secret and grant-secret: the environment
// declares each by name, says where the CLI reads each value (a file or
// an environment variable, never the value) and which services may read
// it. The CLI sends the values beside the deploy; the node that takes
// the request compares them with the latest revision and seals a new
// revision only when they differ (ReviseUserSecrets). The log holds the
// declaration and sealed revisions only.
//
// A user secret's id is derived from the environment's name and the
// secret's name (UserSecretID): Resolve, which turns a config value
// "secret:NAME" into the secret's URI, reads nothing but the environment,
// so the plan, the FSM and every node agree on the URI without a state
// lookup, and applying the same file again finds the same secret.

// KindSecret names a user secret; its names follow the config key rule.
const KindSecret NameKind = "secret"

// MaxUserSecrets caps the secrets one environment declares.
const MaxUserSecrets = 100

// MaxUserSecretBytes caps the keys and values of all of an environment's
// user secrets together: their sealed revisions travel in one deploy
// entry, which MaxCommandBytes caps with the rest of the environment.
const MaxUserSecretBytes = MaxCommandBytes / 4

// maxSecretSource bounds a source's file path or variable name, in bytes.
const maxSecretSource = 1024

// envVarRE is a POSIX environment variable name.
var envVarRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Change kinds of user secrets; Key is the secret's name.
const (
	// AddSecret creates a user secret; New is its URI.
	AddSecret = "add-secret"
	// ReviseSecret adds a revision; Old and New are revision numbers.
	ReviseSecret = "secret-revision"
	// DescribeSecret sets a user secret's description.
	DescribeSecret = "secret-description"
	// GrantSecret grants it to service New.
	GrantSecret = "grant-secret"
	// RevokeSecret revokes service Old's grant.
	RevokeSecret = "revoke-secret"
	// RemoveSecret removes it; Old is its URI.
	RemoveSecret = "remove-secret"
)

// UserSecretSpec is a user secret as the environment declares it: where
// each value is read from, never a value.
type UserSecretSpec struct {
	Description string                  `json:"description,omitempty"`
	Content     map[string]SecretSource `json:"content"`
	// Grant lists the services whose units may read it.
	Grant []string `json:"grant,omitempty"`
}

// SecretSource is where the CLI reads one value: a file (relative to the
// environment file's directory) or an environment variable; exactly one
// is set.
type SecretSource struct {
	File string `json:"file,omitempty"`
	Env  string `json:"env,omitempty"`
}

// String names the source for messages.
func (s SecretSource) String() string {
	if s.File != "" {
		return "file " + Quote(s.File, 64)
	}
	return "environment variable " + Quote(s.Env, 64)
}

// DesiredSecret is a declared user secret, resolved.
type DesiredSecret struct {
	Name        string
	ID          string
	Description string
	// Grants are the granted services, sorted.
	Grants []string
	// Sealed is the content of a new revision, sealed; "" when the
	// values did not change (or the plan was made without them).
	Sealed string
}

// UserSecretID is the id of user secret name of environment env: the
// leading bytes of a sha256 over both, as many as NewSecretID takes, in
// Juju's id alphabet.
func UserSecretID(env, name string) string {
	sum := sha256.Sum256([]byte("fixpoint user secret\x00" + env + "\x00" + name))
	id, _ := NewSecretID(func(b []byte) error { copy(b, sum[:]); return nil })
	return id
}

// resolveUserSecrets checks the declared user secrets and resolves them.
func resolveUserSecrets(env *Environment, ps *Problems) map[string]*DesiredSecret {
	out := map[string]*DesiredSecret{}
	if len(env.Secrets) > MaxUserSecrets {
		ps.add([]string{"secrets"}, "%d secrets declared; the limit is %d", len(env.Secrets), MaxUserSecrets)
		return out
	}
	for _, name := range sortedKeys(env.Secrets) {
		spec := env.Secrets[name]
		path := []string{"secrets", name}
		if err := CheckName(KindSecret, name); err != nil {
			ps.add(path, "%v", err)
			continue
		}
		ok := true
		if err := CheckSecretLabel("description", spec.Description, MaxSecretDescription); err != nil {
			ps.add(append(path, "description"), "%v", err)
			ok = false
		}
		if len(spec.Content) == 0 || len(spec.Content) > MaxSecretKeys {
			ps.add(append(path, "content"), "a secret has 1 to %d keys, each read from a file or an environment variable, e.g. content: password: file: \"./db.pass\"", MaxSecretKeys)
			ok = false
		}
		for _, k := range sortedKeys(spec.Content) {
			if err := checkSecretSource(k, spec.Content[k]); err != nil {
				ps.add(append(path, "content", k), "%v", err)
				ok = false
			}
		}
		seen := map[string]bool{}
		for i, svc := range spec.Grant {
			if _, declared := env.Services[svc]; !declared {
				ps.add(append(path, "grant", strconv.Itoa(i)), "grants secret %s to %s, which is not a service of this environment (services: %s)", name, Quote(svc, 32), listOr(sortedKeys(env.Services)))
				ok = false
			}
			seen[svc] = true
		}
		if ok {
			out[name] = &DesiredSecret{Name: name, ID: UserSecretID(env.Name, name), Description: spec.Description, Grants: sortedKeys(seen)}
		}
	}
	return out
}

// checkSecretSource checks one key of a declared secret and its source.
func checkSecretSource(key string, src SecretSource) error {
	if !secretKeyRE.MatchString(key) {
		return fmt.Errorf("secret key %s: keys are at least 3 characters of a-z, 0-9 and single hyphens, starting with a letter", Quote(key, 32))
	}
	switch {
	case (src.File == "") == (src.Env == ""):
		return fmt.Errorf("give exactly one source: file: \"PATH\" (relative to the environment file) or env: \"VARIABLE\"")
	case len(src.File) > maxSecretSource || strings.ContainsFunc(src.File, isControl):
		return fmt.Errorf("file path: at most %d printable bytes", maxSecretSource)
	case src.Env != "" && (len(src.Env) > maxSecretSource || !envVarRE.MatchString(src.Env)):
		return fmt.Errorf("environment variable %s: letters, digits and underscores, not starting with a digit", Quote(src.Env, 32))
	}
	return nil
}

// resolveSecretRef turns the value of an option of type secret that
// reads "secret:NAME", NAME a declared user secret, into that secret's
// URI. Another secret URI is kept as written; any other value is a plain
// secret string, kept.
func resolveSecretRef(env *Environment, v any) (any, error) {
	s, ok := v.(string)
	if !ok || !strings.HasPrefix(s, "secret:") {
		return v, nil
	}
	name := strings.TrimPrefix(s, "secret:")
	if _, declared := env.Secrets[name]; declared {
		return "secret:" + UserSecretID(env.Name, name), nil
	}
	if _, err := ParseSecretURI(s); err == nil {
		return v, nil
	}
	return nil, fmt.Errorf("names secret %s, which the environment does not declare under secrets (declared: %s)", Quote(name, 32), listOr(sortedKeys(env.Secrets)))
}

// attachSealed gives the desired secrets the sealed new revisions a
// deploy carries.
func attachSealed(desired *Desired, sealed map[string]string) error {
	if len(sealed) > MaxUserSecrets {
		return fmt.Errorf("%d secret revisions in one deploy; the limit is %d", len(sealed), MaxUserSecrets)
	}
	for _, name := range sortedKeys(sealed) {
		ds := desired.Secrets[name]
		if ds == nil {
			return fmt.Errorf("a revision of secret %s, which the environment does not declare", Quote(name, 32))
		}
		if s := sealed[name]; s == "" || len(s) > maxSealed {
			return fmt.Errorf("secret %s: sealed content is empty or over %d bytes", name, maxSealed)
		}
		ds.Sealed = sealed[name]
	}
	return nil
}

// CheckUserSecretsSize refuses values, by secret then key, whose keys
// and values together are over MaxUserSecretBytes.
func CheckUserSecretsSize(values map[string]map[string]string) error {
	size := 0
	for _, vals := range values {
		for k, v := range vals {
			size += len(k) + len(v)
		}
	}
	if size > MaxUserSecretBytes {
		return fmt.Errorf("the user secrets hold %d bytes of keys and values together; the limit is %d (MaxUserSecretBytes): keep large files out of secrets", size, MaxUserSecretBytes)
	}
	return nil
}

// ReviseUserSecrets checks the values the CLI sent for env's user
// secrets (by name, then key) and returns, by name, the new revision of
// each secret whose values differ from its latest revision in st (or
// that is new), sealed with st's key. Values equal to the latest revision
// make none: applying again changes nothing. Its errors name secrets and
// keys, never a value.
func ReviseUserSecrets(st *State, env *Environment, values map[string]map[string]string) (map[string]string, error) {
	if err := CheckUserSecretsSize(values); err != nil {
		return nil, err
	}
	for _, name := range sortedKeys(values) {
		if _, ok := env.Secrets[name]; !ok {
			return nil, fmt.Errorf("secret %s: content sent for a secret the environment does not declare", Quote(name, 32))
		}
	}
	out := map[string]string{}
	for _, name := range sortedKeys(env.Secrets) {
		spec := env.Secrets[name]
		vals, ok := values[name]
		if !ok {
			// An edit of the document by command sends no values: a
			// secret the environment holds keeps its revision.
			if err := keepsContent(st, env, name, spec); err != nil {
				return nil, err
			}
			continue
		}
		for _, k := range sortedKeys(spec.Content) {
			if _, ok := vals[k]; !ok {
				return nil, fmt.Errorf("secret %s: no value sent for key %s", name, k)
			}
		}
		for _, k := range sortedKeys(vals) {
			if _, ok := spec.Content[k]; !ok {
				return nil, fmt.Errorf("secret %s: a value sent for key %s, which the environment does not declare", name, Quote(k, 32))
			}
		}
		if err := CheckSecretContent(vals); err != nil {
			return nil, fmt.Errorf("secret %s: %w", name, err)
		}
		id := UserSecretID(env.Name, name)
		if cur := st.Secrets[id]; cur != nil && cur.OwnerKind == SecretOwnerUser && cur.Latest() > 0 {
			if old, err := st.OpenRevision(cur, cur.Latest()); err == nil && maps.Equal(old, vals) {
				continue
			}
		}
		sealed, err := SealContent(st.Sealer(), id, vals)
		if err != nil {
			return nil, fmt.Errorf("secret %s: %w", name, err)
		}
		out[name] = sealed
	}
	return out, nil
}

// keepsContent refuses a deploy that sends no values for declared
// secret name unless the environment holds that secret already, with the
// keys declared: its latest revision is then kept as it is.
func keepsContent(st *State, env *Environment, name string, spec UserSecretSpec) error {
	cur := st.Secrets[UserSecretID(env.Name, name)]
	if cur == nil || cur.OwnerKind != SecretOwnerUser || cur.Latest() == 0 {
		return fmt.Errorf("secret %s: the request carries no content for it; `fixpoint apply` and `plan` read it from the files and variables the environment names", name)
	}
	old, err := st.OpenRevision(cur, cur.Latest())
	if err != nil {
		return fmt.Errorf("secret %s: the request carries no content for it, and its stored revision cannot be opened to compare its keys: %w", name, err)
	}
	if !slices.Equal(sortedKeys(old), sortedKeys(spec.Content)) {
		return fmt.Errorf("secret %s: its keys change (from %s to %s) and the request carries no content for it; send its values", name, listOr(sortedKeys(old)), listOr(sortedKeys(spec.Content)))
	}
	return nil
}

// userSecretChanges lists the changes that take s's user secrets to d's,
// in a fixed order: by name, then grants by service, then removals.
func userSecretChanges(s *State, d *Desired) []Change {
	var out []Change
	ids := map[string]bool{}
	for _, name := range sortedKeys(d.Secrets) {
		ds := d.Secrets[name]
		ids[ds.ID] = true
		cur := s.Secrets[ds.ID]
		var granted map[string]SecretGrant
		switch {
		case cur == nil || cur.OwnerKind != SecretOwnerUser:
			out = append(out, Change{Kind: AddSecret, Key: name, New: "secret:" + ds.ID})
		default:
			if ds.Sealed != "" {
				out = append(out, Change{Kind: ReviseSecret, Key: name, Old: strconv.Itoa(cur.Latest()), New: strconv.Itoa(cur.Latest() + 1)})
			}
			if cur.Description != ds.Description {
				out = append(out, Change{Kind: DescribeSecret, Key: name, Old: cur.Description, New: ds.Description})
			}
			granted = cur.Grants
		}
		for _, svc := range ds.Grants {
			if _, ok := granted[svc]; !ok {
				out = append(out, Change{Kind: GrantSecret, Key: name, New: svc})
			}
		}
		for _, svc := range sortedKeys(granted) {
			if !slices.Contains(ds.Grants, svc) {
				out = append(out, Change{Kind: RevokeSecret, Key: name, Old: svc})
			}
		}
	}
	for _, id := range sortedKeys(s.Secrets) {
		if sec := s.Secrets[id]; sec.OwnerKind == SecretOwnerUser && !ids[id] {
			out = append(out, Change{Kind: RemoveSecret, Key: sec.Label, Old: sec.URI()})
		}
	}
	return out
}

// secretChangeString words a user secret change for the operator; ok is
// false for a change of another kind. No value is ever part of it.
func secretChangeString(c Change) (string, bool) {
	switch c.Kind {
	case AddSecret:
		return fmt.Sprintf("+ secret %s (%s, revision 1)", c.Key, c.New), true
	case ReviseSecret:
		return fmt.Sprintf("~ secret %s new revision %s", c.Key, c.New), true
	case DescribeSecret:
		return fmt.Sprintf("~ secret %s description %q -> %q", c.Key, c.Old, c.New), true
	case GrantSecret:
		return fmt.Sprintf("+ grant secret %s to %s", c.Key, c.New), true
	case RevokeSecret:
		return fmt.Sprintf("- grant secret %s from %s (revoked)", c.Key, c.Old), true
	case RemoveSecret:
		return fmt.Sprintf("- secret %s (%s)", c.Key, c.Old), true
	}
	return "", false
}

// checkUserSecrets refuses a deploy whose user secret changes cannot
// apply: a new secret without content, an id another secret holds, a
// revision past MaxSecretRevisions.
func checkUserSecrets(s *State, d *Desired, changes []Change) error {
	for _, c := range changes {
		ds := d.Secrets[c.Key]
		switch c.Kind {
		case AddSecret:
			if cur := s.Secrets[ds.ID]; cur != nil {
				return fmt.Errorf("secret %s: its id secret:%s is held by a secret of %s %s; rename the secret", c.Key, ds.ID, cur.OwnerKind, cur.Owner)
			}
			if ds.Sealed == "" {
				return fmt.Errorf("secret %s is new and the deploy carries no content for it; apply with a fixpoint CLI that reads user secrets", c.Key)
			}
		case ReviseSecret:
			if kept := len(prunedRevisions(s.Secrets[ds.ID])); kept >= MaxSecretRevisions {
				return fmt.Errorf("secret %s: consumers track %d revisions; the limit is %d", c.Key, kept, MaxSecretRevisions)
			}
		}
	}
	return nil
}

// prunedRevisions is s's revisions without those no consumer tracks but
// the latest: a user secret has no owner unit to remove them (Juju
// prunes a user secret's revisions the same way).
func prunedRevisions(s *Secret) []SecretRevision {
	var out []SecretRevision
	obsolete := s.Obsolete()
	for _, r := range s.Revisions {
		if !slices.Contains(obsolete, r.Rev) {
			out = append(out, r)
		}
	}
	return out
}

// applyUserSecret carries out one user secret change of a deploy.
func (s *applying) applyUserSecret(index uint64, c Change, d *Desired) {
	if c.Kind == RemoveSecret {
		if id, err := ParseSecretURI(c.Old); err == nil {
			s.dropSecret(id)
		}
		return
	}
	ds := d.Secrets[c.Key]
	if c.Kind == AddSecret {
		sec := &Secret{ID: ds.ID, OwnerKind: SecretOwnerUser, Label: ds.Name, Description: ds.Description, Created: index, Index: index,
			Revisions: []SecretRevision{s.newRevision(1, ds.Sealed, index)}}
		s.stamp(sec, true)
		s.putSecret(ds.ID, sec)
		return
	}
	cur := s.Secrets[ds.ID]
	if cur == nil {
		return
	}
	sec := cur.copy()
	sec.Index = index
	switch c.Kind {
	case ReviseSecret:
		sec.Revisions = append(prunedRevisions(cur), s.newRevision(cur.Latest()+1, ds.Sealed, index))
		s.stamp(sec, false)
	case DescribeSecret:
		sec.Description = ds.Description
		s.stamp(sec, false)
	case GrantSecret:
		sec.Grants = withEntry(sec.Grants, c.New, SecretGrant{Relation: -1})
	case RevokeSecret:
		sec.Grants = withoutEntry(sec.Grants, c.Old)
		for who := range sec.Consumers {
			if ServiceOf(who) == c.Old && !s.SecretSees(sec, who, c.Old) {
				sec.Consumers = withoutEntry(sec.Consumers, who)
			}
		}
	}
	s.putSecret(ds.ID, sec)
}
