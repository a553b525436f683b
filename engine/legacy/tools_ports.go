package legacy

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fixpoint/fixpoint/model"
)

// endpointsFlag is Juju 3's --endpoints of open-port and close-port: the
// charm's endpoints, comma-separated, that the port is opened or closed
// for; without it, all of them. The session keeps a port opened for an
// endpoint as the model does, "PORT@ENDPOINT" (model.SplitPortEndpoint).
var endpointsFlag = flagDef{name: "endpoints"}

// openPort is `open-port [--endpoints EP,...] PORT[/PROTO] | FROM-TO[/PROTO] | icmp`.
func (w *hookWrites) openPort(c *call) (any, error) {
	p, eps, err := portArgs(c)
	if err != nil {
		return nil, err
	}
	if len(eps) == 0 {
		w.ports[p] = true
	}
	for _, ep := range eps {
		w.ports[p+model.PortEndpointSep+ep] = true
	}
	w.portsWritten = true
	return noOutput{}, nil
}

// closePort is `close-port [--endpoints EP,...] PORT[/PROTO] | FROM-TO[/PROTO] | icmp`:
// for the endpoints named, or, without them, for every endpoint.
func (w *hookWrites) closePort(c *call) (any, error) {
	p, eps, err := portArgs(c)
	if err != nil {
		return nil, err
	}
	if len(eps) == 0 {
		for entry := range w.ports {
			if port, _, _ := model.SplitPortEndpoint(entry); port == p {
				delete(w.ports, entry)
			}
		}
	}
	for _, ep := range eps {
		delete(w.ports, p+model.PortEndpointSep+ep)
	}
	w.portsWritten = true
	return noOutput{}, nil
}

// openedPorts is `opened-ports [--endpoints]`: the unit's open ports with
// this reconcile's changes, each once; --endpoints adds the endpoints each
// applies to, as Juju prints them: "80/tcp (*)" for all of them,
// "8080/tcp (db, website)" for some.
func (w *hookWrites) openedPorts(c *call) (any, error) {
	if err := checkEmpty(c.f.args); err != nil {
		return nil, err
	}
	byPort := map[string][]string{}
	for entry := range w.ports {
		port, ep, scoped := model.SplitPortEndpoint(entry)
		if !scoped {
			ep = "*"
		}
		byPort[port] = append(byPort[port], ep)
	}
	set := make(map[string]bool, len(byPort))
	for port := range byPort {
		set[port] = true
	}
	ports := sortPorts(set)
	if !c.f.bool("endpoints") {
		return ports, nil
	}
	out := make([]string, len(ports))
	for i, port := range ports {
		eps := byPort[port]
		sort.Strings(eps)
		if eps[0] == "*" {
			// "*" sorts first: open on all endpoints covers the rest.
			eps = eps[:1]
		}
		out[i] = port + " (" + strings.Join(eps, ", ") + ")"
	}
	return out, nil
}

// portArgs reads open-port's and close-port's port and --endpoints.
func portArgs(c *call) (string, []string, error) {
	args := c.f.args
	if len(args) == 0 {
		return "", nil, usagef("no port or range specified")
	}
	if err := checkEmpty(args[1:]); err != nil {
		return "", nil, err
	}
	p, err := parsePort(args[0])
	if err != nil {
		return "", nil, &usageError{err.Error()}
	}
	var eps []string
	if c.f.has("endpoints") {
		for _, ep := range strings.Split(c.f.str("endpoints"), ",") {
			if ep = strings.TrimSpace(ep); ep == "" {
				continue
			}
			if err := model.CheckName(model.KindEndpoint, ep); err != nil {
				return "", nil, usagef("--endpoints: %v", err)
			}
			eps = append(eps, ep)
		}
	}
	return p, eps, nil
}

// parseEntry normalises an open port as the model keeps it: a port
// (parsePort), and the endpoint it is scoped to, if any.
func parseEntry(entry string) (string, error) {
	port, ep, scoped := model.SplitPortEndpoint(entry)
	p, err := parsePort(port)
	if err != nil || !scoped {
		return p, err
	}
	if err := model.CheckName(model.KindEndpoint, ep); err != nil {
		return "", fmt.Errorf("port %q: %w", entry, err)
	}
	return p + model.PortEndpointSep + ep, nil
}

// parsePort normalises a port spec: "80" is "80/tcp", "8000-8000/udp" is
// "8000/udp", "icmp" stays.
func parsePort(spec string) (string, error) {
	bad := fmt.Errorf("invalid port %q: expected <port>[/<protocol>], <from>-<to>[/<protocol>] or icmp", spec)
	s := strings.ToLower(strings.TrimSpace(spec))
	if s == "icmp" {
		return s, nil
	}
	ports, proto, hasProto := strings.Cut(s, "/")
	if !hasProto {
		proto = "tcp"
	}
	if proto != "tcp" && proto != "udp" {
		return "", bad
	}
	fromS, toS, isRange := strings.Cut(ports, "-")
	if !isRange {
		toS = fromS
	}
	from, err1 := strconv.Atoi(fromS)
	to, err2 := strconv.Atoi(toS)
	if err1 != nil || err2 != nil || from < 1 || to > 65535 || from > to {
		return "", bad
	}
	if from == to {
		return fmt.Sprintf("%d/%s", from, proto), nil
	}
	return fmt.Sprintf("%d-%d/%s", from, to, proto), nil
}

// sortPorts lists a port set by protocol, then port, icmp last; a port's
// entries for endpoints follow it, by endpoint.
func sortPorts(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	key := func(entry string) (string, int, string) {
		p, ep, _ := model.SplitPortEndpoint(entry)
		if p == "icmp" {
			return "~", 0, ep
		}
		ports, proto, _ := strings.Cut(p, "/")
		from, _, _ := strings.Cut(ports, "-")
		n, _ := strconv.Atoi(from)
		return proto, n, ep
	}
	sort.Slice(out, func(i, j int) bool {
		pi, ni, ei := key(out[i])
		pj, nj, ej := key(out[j])
		if pi != pj {
			return pi < pj
		}
		if ni != nj {
			return ni < nj
		}
		if ei != ej {
			return ei < ej
		}
		return out[i] < out[j]
	})
	return out
}
