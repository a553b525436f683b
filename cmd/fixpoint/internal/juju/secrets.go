package juju

import (
	"strconv"
	"strings"

	"github.com/fixpoint/fixpoint/engine/api"
)

// Secret is one secret as `juju secrets --format json` and `juju
// show-secret --format json` print it, keyed by its bare id. Created and
// Updated are always there, as jubilant reads them without a default: a
// secret made while the cluster recorded no times shows NoTime.
type Secret struct {
	Revision    int              `json:"revision" yaml:"revision"`
	Created     string           `json:"created" yaml:"created"`
	Updated     string           `json:"updated" yaml:"updated"`
	Expires     string           `json:"expires,omitempty" yaml:"expires,omitempty"`
	Rotation    string           `json:"rotation,omitempty" yaml:"rotation,omitempty"`
	Rotates     string           `json:"rotates,omitempty" yaml:"rotates,omitempty"`
	Owner       string           `json:"owner,omitempty" yaml:"owner,omitempty"`
	Description string           `json:"description,omitempty" yaml:"description,omitempty"`
	Name        string           `json:"name,omitempty" yaml:"name,omitempty"`
	Label       string           `json:"label,omitempty" yaml:"label,omitempty"`
	Content     *SecretContent   `json:"content,omitempty" yaml:"content,omitempty"`
	Revisions   []SecretRevision `json:"revisions,omitempty" yaml:"revisions,omitempty"`
	Access      []SecretAccess   `json:"access,omitempty" yaml:"access,omitempty"`
}

// SecretContent is a revealed revision's keys and values. Juju's field
// is named Data in JSON (its struct's inline tag is YAML's only).
type SecretContent struct {
	Data map[string]string `json:"Data,omitempty" yaml:",inline"`
}

// SecretRevision is one kept revision, with --revisions.
type SecretRevision struct {
	Revision int    `json:"revision" yaml:"revision"`
	Backend  string `json:"backend,omitempty" yaml:"backend,omitempty"`
	Created  string `json:"created" yaml:"created"`
	Updated  string `json:"updated" yaml:"updated"`
	Expires  string `json:"expires,omitempty" yaml:"expires,omitempty"`
}

// NoTime is the time shown for a secret or revision made while the
// control plane recorded no times (a cluster below feature level 2): Go's
// zero time, as Juju prints an unset time, which jubilant parses.
const NoTime = "0001-01-01T00:00:00Z"

// orNoTime is t, or NoTime when no time was recorded.
func orNoTime(t string) string {
	if t == "" {
		return NoTime
	}
	return t
}

// SecretAccess is one grant, as show-secret lists them: the grantee's
// tag, the scope the grant follows (a relation's tag, or the model's for
// the operator's grants) and the role.
type SecretAccess struct {
	Target string `json:"target" yaml:"target"`
	Scope  string `json:"scope" yaml:"scope"`
	Role   string `json:"role" yaml:"role"`
}

// SecretOwner is a secret's owner as Juju prints it: the application's or
// unit's name, or "<model>" for a user secret.
func SecretOwner(owner string) string {
	kind, name, _ := strings.Cut(owner, " ")
	if kind == "user" || name == "" {
		return "<model>"
	}
	return name
}

// BareID is a secret's id without "secret:", as Juju keys its secrets.
func BareID(uri string) string { return strings.TrimPrefix(uri, "secret:") }

// SecretDetails is s as Juju shows it; a user secret's label is its name,
// as Juju's model-owned secrets have a name and no label. relationTag
// names a relation by id for the grants (show-secret); nil leaves them
// out (secrets). Revisions come with revisions.
func SecretDetails(s *api.SecretInfo, model string, relationTag func(int) string, revisions bool) Secret {
	out := Secret{Revision: s.Revision, Created: orNoTime(s.Created), Updated: orNoTime(s.Updated), Expires: s.Expire, Rotation: s.Rotate, Rotates: s.NextRotate,
		Owner: SecretOwner(s.Owner), Description: s.Description, Label: s.Label}
	if out.Owner == "<model>" {
		out.Name, out.Label = s.Label, ""
	}
	if s.Content != nil {
		out.Content = &SecretContent{Data: s.Content}
	}
	if revisions {
		for _, r := range s.Revisions {
			// A revision is not changed once made: its updated is its
			// created.
			made := orNoTime(r.Created)
			out.Revisions = append(out.Revisions, SecretRevision{Revision: r.Revision, Backend: "internal", Created: made, Updated: made, Expires: r.Expire})
		}
	}
	if relationTag != nil {
		for _, g := range s.Grants {
			scope := "model-" + ModelUUID(model)
			if g.Relation >= 0 {
				scope = relationTag(g.Relation)
			}
			out.Access = append(out.Access, SecretAccess{Target: entityTag(g.To), Scope: scope, Role: "view"})
		}
	}
	return out
}

// entityTag is Juju's tag of a unit or an application name:
// "unit-web-0", "application-web".
func entityTag(name string) string {
	if svc, num, ok := strings.Cut(name, "/"); ok {
		return "unit-" + svc + "-" + num
	}
	return "application-" + name
}

// RelationTag is Juju's tag of a relation from its endpoints
// ("web:db", "db:db"): "relation-web.db#db.db"; a relation without
// endpoints is named by its id.
func RelationTag(id int, endpoints []string) string {
	if len(endpoints) == 0 {
		return "relation-" + strconv.Itoa(id)
	}
	parts := make([]string, len(endpoints))
	for i, e := range endpoints {
		parts[i] = strings.Replace(e, ":", ".", 1)
	}
	return "relation-" + strings.Join(parts, "#")
}
