package model

import (
	"fmt"
	"slices"
	"strings"
)

// The cloud credential, as Juju's for charms deployed with --trust: the
// environment declares it once, its attributes as a user secret
// (secrets_user.go: read from files or environment variables at apply
// time, sealed in the log, never in the file), and a service with trust:
// true gets it through credential-get; any other gets Juju's permission
// error. The secret is granted to every trusted service.

// CredentialSpec is the environment's cloud credential: the cloud's
// description, and the user secret holding its attributes.
type CredentialSpec struct {
	// Type is the cloud's type, as Juju's cloud types ("lxd", "openstack").
	Type string `json:"type"`
	// Name is the cloud's name.
	Name     string `json:"name"`
	Region   string `json:"region,omitempty"`
	Endpoint string `json:"endpoint,omitempty"`
	// AuthType is the credential's auth type ("certificate", "userpass").
	AuthType string `json:"auth_type"`
	// Secret names the declared user secret whose keys and values are the
	// credential's attributes; "" for a credential without attributes
	// (Juju's auth type "empty", as a manual cloud's).
	Secret string `json:"secret,omitempty"`
}

// Credential is the credential in force: the spec, with its secret's id.
type Credential struct {
	Type     string `json:"type"`
	Name     string `json:"name"`
	Region   string `json:"region,omitempty"`
	Endpoint string `json:"endpoint,omitempty"`
	AuthType string `json:"auth_type"`
	// SecretID is the user secret's id (UserSecretID); "" for a
	// credential without attributes.
	SecretID string `json:"secret_id"`
}

// maxCredentialField bounds each descriptive field of a credential, in
// bytes: a cloud's name or endpoint URL.
const maxCredentialField = 1024

// resolveCredential checks env's credential and the trust of its
// services, and grants the credential's secret to the trusted ones.
func resolveCredential(env *Environment, d *Desired, ps *Problems) {
	spec := env.Credential
	if spec == nil {
		for _, name := range sortedKeys(env.Services) {
			if env.Services[name].Trust {
				ps.add([]string{"services", name, "trust"}, "service %s is trusted, but the environment declares no credential for it to read; add credential: {type, name, auth_type, secret} naming a user secret that holds its attributes", name)
			}
		}
		return
	}
	path := []string{"credential"}
	ok := true
	for _, f := range []struct{ key, v string }{{"type", spec.Type}, {"name", spec.Name}, {"auth_type", spec.AuthType}, {"region", spec.Region}, {"endpoint", spec.Endpoint}} {
		required := f.key == "type" || f.key == "name" || f.key == "auth_type"
		switch {
		case required && f.v == "":
			ps.add(append(path, f.key), "is required, e.g. credential: {type: \"lxd\", name: \"localhost\", auth_type: \"certificate\", secret: \"cloud\"}")
			ok = false
		case len(f.v) > maxCredentialField || strings.ContainsFunc(f.v, isControl):
			ps.add(append(path, f.key), "at most %d printable bytes", maxCredentialField)
			ok = false
		}
	}
	if spec.Secret == "" {
		// No attributes: nothing to grant.
		if ok {
			d.Credential = &Credential{Type: spec.Type, Name: spec.Name, Region: spec.Region, Endpoint: spec.Endpoint, AuthType: spec.AuthType}
		}
		return
	}
	ds := d.Secrets[spec.Secret]
	if ds == nil {
		ps.add(append(path, "secret"), "names %s, which is not a declared user secret (secrets: %s); its keys are the credential's attributes", Quote(spec.Secret, 32), listOr(sortedKeys(env.Secrets)))
		ok = false
	}
	if !ok {
		return
	}
	d.Credential = &Credential{Type: spec.Type, Name: spec.Name, Region: spec.Region, Endpoint: spec.Endpoint, AuthType: spec.AuthType, SecretID: ds.ID}
	for _, name := range sortedKeys(env.Services) {
		if env.Services[name].Trust && !slices.Contains(ds.Grants, name) {
			ds.Grants = append(ds.Grants, name)
		}
	}
	slices.Sort(ds.Grants)
}

// SetCredential is the change kind of the credential in force; SetTrust
// of a service's trust (Old and New are "true" or "false").
const (
	SetCredential = "credential"
	SetTrust      = "trust"
	// SetExpose is a service's exposure (Juju's expose, unexpose); Old
	// and New are "true" or "false".
	SetExpose = "expose"
)

// credentialChanges lists the changes that take s's credential and trust
// to d's.
func credentialChanges(s *State, d *Desired) []Change {
	var out []Change
	if !credentialEqual(s.Credential, d.Credential) {
		out = append(out, Change{Kind: SetCredential, Old: credentialString(s.Credential), New: credentialString(d.Credential)})
	}
	for _, name := range sortedKeys(d.Services) {
		cur := s.Services[name]
		if cur == nil || cur.Life != Alive {
			continue
		}
		if want := d.Services[name].Trust; cur.Trust != want {
			out = append(out, Change{Kind: SetTrust, Service: name, Old: fmt.Sprint(cur.Trust), New: fmt.Sprint(want)})
		}
		if want := d.Services[name].Expose; cur.Exposed != want {
			out = append(out, Change{Kind: SetExpose, Service: name, Old: fmt.Sprint(cur.Exposed), New: fmt.Sprint(want)})
		}
	}
	return out
}

func credentialEqual(a, b *Credential) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// credentialString names a credential for a plan: its cloud and auth
// type, never an attribute.
func credentialString(c *Credential) string {
	if c == nil {
		return "none"
	}
	return fmt.Sprintf("%s cloud %s (%s)", c.Type, c.Name, c.AuthType)
}

// TrustedCredential is the credential u's service may read: the one in
// force when the service is trusted, else nil.
func (s *State) TrustedCredential(u *Unit) *Credential {
	if svc := s.Services[u.Service]; svc != nil && svc.Trust {
		return s.Credential
	}
	return nil
}
