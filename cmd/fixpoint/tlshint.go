package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// withTLSHints is hc (nil: the default client) with its TLS failures
// explained: which file to pass, and how. ca is the CA in use ("" for the
// system's), from says where it came from.
func withTLSHints(hc *http.Client, ca, from string) *http.Client {
	out := &http.Client{}
	if hc != nil {
		*out = *hc
	}
	base := out.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	out.Transport = tlsHints{base: base, ca: ca, from: from}
	return out
}

// tlsHints passes requests to base and explains its TLS failures.
type tlsHints struct {
	base     http.RoundTripper
	ca, from string
}

func (t tlsHints) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, tlsHint(err, r.URL.Host, t.ca, t.from)
	}
	return resp, nil
}

// hintError is an error explained for the operator; errors.Is and As
// still see the cause.
type hintError struct {
	msg string
	err error
}

func (e *hintError) Error() string { return e.msg }
func (e *hintError) Unwrap() error { return e.err }

// tlsHint explains err when it is a TLS failure talking to host with the
// CA ca (from from); other errors are returned as they are.
func tlsHint(err error, host, ca, from string) error {
	var unknown x509.UnknownAuthorityError
	var name x509.HostnameError
	var invalid x509.CertificateInvalidError
	var record tls.RecordHeaderError
	var msg string
	switch {
	case errors.As(err, &unknown) && ca == "":
		msg = "the server's certificate is not signed by a CA you trust: pass the cluster's CA with --tls-ca tls/ca.pem (the ca.pem fixpoint tls init made), set FIXPOINT_CA=tls/ca.pem, or save it in a context with fixpoint login ADDR --token-file F --ca tls/ca.pem"
	case errors.As(err, &unknown):
		msg = fmt.Sprintf("the server's certificate is not signed by the CA in %s (given by %s): pass the CA that signed the servers' certificates (the ca.pem in the --dir of fixpoint tls init) with --tls-ca or FIXPOINT_CA", ca, from)
	case errors.As(err, &name):
		h, _, splitErr := net.SplitHostPort(host)
		if splitErr != nil {
			h = host
		}
		msg = fmt.Sprintf("the server's certificate is not valid for %s (it is for %s): connect by one of those names, or give the server a certificate for it (fixpoint tls cert --role server --name NODE --host %s --force, then restart the server)", h, certNames(name.Certificate), h)
	case errors.As(err, &invalid):
		msg = fmt.Sprintf("the server's certificate is not valid (%v): make it a new one with fixpoint tls cert --role server --force and restart the server", invalid)
	case errors.As(err, &record):
		msg = fmt.Sprintf("%s answers plain HTTP, not HTTPS: address it as http://%s (a CA from %s makes bare addresses https), or start the server with --tls-cert, --tls-key and --tls-ca", host, host, from)
	default:
		return err
	}
	return &hintError{msg: msg + " (" + err.Error() + ")", err: err}
}

// certNames lists the names and addresses a certificate is valid for.
func certNames(c *x509.Certificate) string {
	if c == nil {
		return "no name"
	}
	var names []string
	names = append(names, c.DNSNames...)
	for _, ip := range c.IPAddresses {
		names = append(names, ip.String())
	}
	if len(names) == 0 {
		return "no name"
	}
	return strings.Join(names, ", ")
}

// httpsByDefault makes bare host:port addresses https URLs: with a CA the
// control plane speaks HTTPS.
func httpsByDefault(addrs []string) []string {
	out := make([]string, 0, len(addrs))
	for _, a := range addrs {
		a = strings.TrimSpace(a)
		if a != "" && !strings.HasPrefix(a, "http://") && !strings.HasPrefix(a, "https://") {
			a = "https://" + a
		}
		out = append(out, a)
	}
	return out
}
