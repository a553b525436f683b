package model

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The rules for what a hook may return. They are the one authority: the
// engine's result decoder, the Go fast path of the #Result schema and the
// command validation before and inside the FSM all call these.
const (
	// MaxSettingsBytes caps one bag (keys plus values), so a runaway hook
	// cannot bloat the log.
	MaxSettingsBytes = 64 << 10
	// MaxSettingsKey caps one settings key, in characters.
	MaxSettingsKey = 256
	// MaxStatusMessage caps a workload status message, in characters.
	MaxStatusMessage = 1 << 10
	// MaxPorts caps the ports one unit opens, an entry per endpoint a
	// port is scoped to.
	MaxPorts = 1024
	// MaxErrorBytes caps the error kept for a failed run.
	MaxErrorBytes = 16 << 10
)

// CheckPort checks an open port: "icmp", "N/tcp", "N/udp" or a range
// "N-M/tcp" with 1 <= N <= M <= 65535, open on every endpoint of the
// charm, or followed by "@ENDPOINT" for one of them.
func CheckPort(p string) error {
	p, endpoint, scoped := SplitPortEndpoint(p)
	if scoped {
		if err := CheckName(KindEndpoint, endpoint); err != nil {
			return fmt.Errorf("port %s: %w", Quote(p, 24), err)
		}
	}
	if p == "icmp" {
		return nil
	}
	num, proto, ok := strings.Cut(p, "/")
	if ok && (proto == "tcp" || proto == "udp") {
		lo, hi, isRange := strings.Cut(num, "-")
		if !isRange {
			hi = lo
		}
		a, aok := portNumber(lo)
		b, bok := portNumber(hi)
		switch {
		case aok && bok && a > b:
			return fmt.Errorf("port range %s runs backwards: write the lower port first", Quote(p, 24))
		case aok && bok:
			return nil
		}
	}
	return fmt.Errorf("%s is not a port: write \"80/tcp\", \"53/udp\", \"8000-8080/tcp\" or \"icmp\" (ports 1 to 65535), and \"@endpoint\" after it to open it for that endpoint alone", Quote(p, 24))
}

// PortEndpointSep joins a port to the one endpoint it is opened for
// ("8080/tcp@website"), as Juju 3 opens a port for chosen endpoints of the
// charm; a port without it is open for all of them.
const PortEndpointSep = "@"

// SplitPortEndpoint splits an open-port entry into its port and the
// endpoint it is scoped to; scoped is false for a port open on every
// endpoint.
func SplitPortEndpoint(entry string) (port, endpoint string, scoped bool) {
	return strings.Cut(entry, PortEndpointSep)
}

// portNumber parses 1..65535 written in plain decimal digits.
func portNumber(s string) (int, bool) {
	if s == "" || len(s) > 5 || s[0] == '0' {
		return 0, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 1 && n <= 65535
}

// CheckStatus checks a workload status a hook reports.
func CheckStatus(state, message string) (field string, err error) {
	if !slices.Contains(StatusStates, state) {
		return "state", fmt.Errorf("status state must be %s; got %s", orList(StatusStates), Quote(state, 24))
	}
	// Counted in characters, as the schema's strings.MaxRunes counts.
	if n := utf8.RuneCountInString(message); n > MaxStatusMessage {
		return "message", fmt.Errorf("status message is %d characters long; the limit is %d", n, MaxStatusMessage)
	}
	return "", nil
}

// CheckSettings checks one bag; key is the offending key, if any.
func CheckSettings(m map[string]string) (key string, err error) {
	size := 0
	for _, k := range sortedKeys(m) {
		switch {
		case k == "":
			return k, fmt.Errorf("settings keys must be 1 to %d characters long", MaxSettingsKey)
		case utf8.RuneCountInString(k) > MaxSettingsKey:
			return k, fmt.Errorf("settings keys must be 1 to %d characters long", MaxSettingsKey)
		}
		size += len(k) + len(m[k])
	}
	if size > MaxSettingsBytes {
		return "", fmt.Errorf("%d bytes of settings; the limit is %d", size, MaxSettingsBytes)
	}
	return "", nil
}

// CheckPorts checks a unit's list of open ports; index is the offending
// entry, or -1.
func CheckPorts(ports []string) (index int, err error) {
	if len(ports) > MaxPorts {
		return -1, fmt.Errorf("%d ports; the limit is %d", len(ports), MaxPorts)
	}
	for i, p := range ports {
		if err := CheckPort(p); err != nil {
			return i, err
		}
	}
	return -1, nil
}

func orList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// Truncate cuts s to at most max bytes on a rune boundary, saying so.
func Truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const mark = "… (truncated)"
	cut := max - len(mark)
	for cut > 0 && cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut--
	}
	if cut < 0 {
		cut = 0
	}
	return s[:cut] + mark
}
