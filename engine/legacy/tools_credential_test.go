package legacy

import (
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
)

const credSecret = "secret:cn0gqa6qs7s1bm0kfp8g"

// trusted gives u the environment's credential, as the universe of a
// trusted service's unit carries it.
func trusted(u *charmapi.Universe) *charmapi.Universe {
	u.Credential = &charmapi.Credential{Type: "lxd", Name: "localhost", Endpoint: "https://10.0.0.1:8443", AuthType: "certificate", Secret: credSecret}
	u.Secrets = append(u.Secrets, charmapi.Secret{ID: credSecret, Latest: 2, Content: map[string]string{},
		LatestContent: map[string]string{"client-cert": "CERT", "client-key": "KEY"}})
	return u
}

// TestCredentialGet: a trusted service's unit reads the credential in
// Juju's shape; any other gets Juju's permission error.
func TestCredentialGet(t *testing.T) {
	got := callIn(t, trusted(testUniverse()), ev("install", "", "", "", ""), "credential-get", "--format=json")
	want := `{"type":"lxd","name":"localhost","endpoint":"https://10.0.0.1:8443","credential":{"auth-type":"certificate","attrs":{"client-cert":"CERT","client-key":"KEY"}}}` + "\n"
	if got.Code != 0 || got.Stdout != want {
		t.Errorf("credential-get of a trusted unit: %+v\nwant %s", got, want)
	}
	got = callIn(t, testUniverse(), ev("install", "", "", "", ""), "credential-get", "--format=json")
	if got.Code != 1 || got.Stderr != "ERROR permission denied\n" || got.Stdout != "" {
		t.Errorf("credential-get of an untrusted unit: %+v", got)
	}
	u := trusted(testUniverse())
	u.Secrets = nil
	if got := callIn(t, u, ev("install", "", "", "", ""), "credential-get"); got.Code != 1 || !strings.Contains(got.Stderr, "not granted") {
		t.Errorf("credential-get without its secret: %+v", got)
	}
	// A manual cloud's credential has no attributes and names no secret.
	u = testUniverse()
	u.Credential = &charmapi.Credential{Type: "manual", Name: "fixpoint", AuthType: "empty"}
	want = `{"type":"manual","name":"fixpoint","credential":{"auth-type":"empty"}}` + "\n"
	if got := callIn(t, u, ev("install", "", "", "", ""), "credential-get", "--format=json"); got.Code != 0 || got.Stdout != want {
		t.Errorf("credential-get without attributes: %+v\nwant %s", got, want)
	}
}

// TestHookcmdsCredentialGet is test_hookcmds.py's test_credential_get with
// canonical/operator's charm, deployed trusted.
func TestHookcmdsCredentialGet(t *testing.T) {
	charm := conformanceCharm(t, "test_hookcmds")
	out := runHookcmdsAction(t, charm, trusted(hookcmdsUniverse()), "test-credential-get", nil)
	if out.Results["cloud-type"] != "lxd" || out.Results["cloud-name"] != "localhost" {
		t.Errorf("results = %v; want the cloud's type and name", out.Results)
	}
}
