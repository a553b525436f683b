package legacy

import (
	"fmt"
	"maps"
)

// cloudSpec is credential-get's output, Juju's CloudSpec as its hook tool
// prints it (apiserver/params.CloudSpec through the uniter).
type cloudSpec struct {
	Type             string           `json:"type" yaml:"type"`
	Name             string           `json:"name" yaml:"name"`
	Region           string           `json:"region,omitempty" yaml:"region,omitempty"`
	Endpoint         string           `json:"endpoint,omitempty" yaml:"endpoint,omitempty"`
	IdentityEndpoint string           `json:"identity-endpoint,omitempty" yaml:"identity-endpoint,omitempty"`
	StorageEndpoint  string           `json:"storage-endpoint,omitempty" yaml:"storage-endpoint,omitempty"`
	Credential       *cloudCredential `json:"credential,omitempty" yaml:"credential,omitempty"`
	CACertificates   []string         `json:"cacertificates,omitempty" yaml:"cacertificates,omitempty"`
	SkipTLSVerify    bool             `json:"skip-tls-verify,omitempty" yaml:"skip-tls-verify,omitempty"`
	IsController     bool             `json:"is-controller-cloud,omitempty" yaml:"is-controller-cloud,omitempty"`
}

type cloudCredential struct {
	AuthType   string            `json:"auth-type" yaml:"auth-type"`
	Attributes map[string]string `json:"attrs,omitempty" yaml:"attrs,omitempty"`
}

// credentialGet is `credential-get [--format]`: the environment's cloud
// credential for a trusted service's unit, its attributes from the secret
// the universe names; for any other unit Juju's "permission denied".
func (in *inputs) credentialGet(c *call) (any, error) {
	if err := checkEmpty(c.f.args); err != nil {
		return nil, err
	}
	cred := in.u.Credential
	if cred == nil {
		return nil, errPermission
	}
	var attrs map[string]string
	if cred.Secret == "" {
		// A credential without attributes (auth type "empty").
		attrs = map[string]string{}
	}
	for i := range in.u.Secrets {
		sec := &in.u.Secrets[i]
		if sec.ID != cred.Secret {
			continue
		}
		// The latest revision, as the controller reads the credential
		// it holds; the unit tracks no revision of it.
		attrs = sec.LatestContent
		if attrs == nil {
			attrs = sec.Content
		}
	}
	if attrs == nil {
		return nil, fmt.Errorf("cannot read the cloud credential: its secret %s is not granted to %s", cred.Secret, in.u.Service)
	}
	return cloudSpec{Type: cred.Type, Name: cred.Name, Region: cred.Region, Endpoint: cred.Endpoint,
		Credential: &cloudCredential{AuthType: cred.AuthType, Attributes: maps.Clone(attrs)}}, nil
}
