package legacy

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// endpointsFlag is accepted for Juju 2.9+ compatibility; ports here are
// the unit's, whatever endpoint a charm names.
var endpointsFlag = flagDef{name: "endpoints"}

// openPort is `open-port PORT[/PROTO] | FROM-TO[/PROTO] | icmp`.
func openPort(s *session, c *call) (any, error) {
	p, err := portArg(c)
	if err != nil {
		return nil, err
	}
	s.ports[p], s.portsSet = true, true
	return noOutput{}, nil
}

// closePort is `close-port PORT[/PROTO] | FROM-TO[/PROTO] | icmp`.
func closePort(s *session, c *call) (any, error) {
	p, err := portArg(c)
	if err != nil {
		return nil, err
	}
	delete(s.ports, p)
	s.portsSet = true
	return noOutput{}, nil
}

// openedPorts is `opened-ports [--endpoints]`: the unit's open ports with
// this reconcile's changes; --endpoints is a flag, as in Juju, that adds
// the endpoints each port applies to.
func openedPorts(s *session, c *call) (any, error) {
	if err := checkEmpty(c.f.args); err != nil {
		return nil, err
	}
	if c.f.bool("endpoints") {
		return portsWithEndpoints(sortPorts(s.ports)), nil
	}
	return sortPorts(s.ports), nil
}

func portArg(c *call) (string, error) {
	args := c.f.args
	if len(args) == 0 {
		return "", usagef("no port or range specified")
	}
	if err := checkEmpty(args[1:]); err != nil {
		return "", err
	}
	p, err := parsePort(args[0])
	if err != nil {
		return "", &usageError{err.Error()}
	}
	return p, nil
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

// sortPorts lists a port set by protocol, then port, icmp last.
func sortPorts(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	key := func(p string) (string, int) {
		if p == "icmp" {
			return "~", 0
		}
		ports, proto, _ := strings.Cut(p, "/")
		from, _, _ := strings.Cut(ports, "-")
		n, _ := strconv.Atoi(from)
		return proto, n
	}
	sort.Slice(out, func(i, j int) bool {
		pi, ni := key(out[i])
		pj, nj := key(out[j])
		if pi != pj {
			return pi < pj
		}
		if ni != nj {
			return ni < nj
		}
		return out[i] < out[j]
	})
	return out
}
