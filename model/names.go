package model

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxNameLen bounds every name that crosses a boundary, as a DNS label is
// bounded: names end up in every status answer, universe and metric, so
// one megabyte-long machine name would make each of those megabytes long.
const MaxNameLen = 63

// NameKind says what a name names; it words the error and picks the
// separators the name may use.
type NameKind string

// Kinds of names. Services and machines are DNS labels (they become host
// and directory names); endpoints, relations, interfaces and config keys
// may also use "_" between parts, as charms write "max_connections".
const (
	KindService   NameKind = "service"
	KindMachine   NameKind = "machine"
	KindEndpoint  NameKind = "endpoint"
	KindRelation  NameKind = "relation"
	KindInterface NameKind = "interface"
	KindConfigKey NameKind = "config key"
	KindCharm     NameKind = "charm name"
)

// CheckName is the one rule for names: 1 to MaxNameLen characters, a
// lower-case letter first, then lower-case letters and digits in parts
// joined by single separators ("-", or also "_" for the kinds that allow
// it), ending in a letter or digit.
func CheckName(kind NameKind, s string) error {
	if s == "" {
		return fmt.Errorf("%s name is empty", kind)
	}
	if len(s) > MaxNameLen {
		return fmt.Errorf("%s name %s is %d bytes long; the limit is %d", kind, Quote(s, 24), len(s), MaxNameLen)
	}
	underscore := kind != KindService && kind != KindMachine && kind != KindEnv
	prevSep := true // a separator may not lead
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z':
			prevSep = false
		case c >= '0' && c <= '9':
			if i == 0 {
				return fmt.Errorf("%s name %s is invalid: it starts with a digit; start with a lower-case letter", kind, Quote(s, 24))
			}
			prevSep = false
		case c == '-' || (c == '_' && underscore):
			if prevSep {
				return fmt.Errorf("%s name %s is invalid: a separator at the start or two in a row; use %s", kind, Quote(s, 24), allowedChars(underscore))
			}
			prevSep = true
		default:
			return fmt.Errorf("%s name %s is invalid: %s at byte %d; use %s", kind, Quote(s, 24), Quote(string(c), 4), i, allowedChars(underscore))
		}
	}
	if prevSep {
		return fmt.Errorf("%s name %s is invalid: it ends with a separator", kind, Quote(s, 24))
	}
	return nil
}

func allowedChars(underscore bool) string {
	if underscore {
		return "lower-case letters, digits and single dashes or underscores, starting with a letter"
	}
	return "lower-case letters, digits and single dashes, starting with a letter"
}

// ValidName reports whether s is a valid service or machine name.
func ValidName(s string) bool { return CheckName(KindService, s) == nil }

// CheckUnitName checks "service/N": a valid service name and a decimal
// number without leading zeros.
func CheckUnitName(s string) error {
	svc, num, ok := strings.Cut(s, "/")
	if !ok {
		return fmt.Errorf("unit name %s is not written service/N", Quote(s, 24))
	}
	if err := CheckName(KindService, svc); err != nil {
		return fmt.Errorf("unit %s: %w", Quote(s, 24), err)
	}
	n, err := strconv.ParseUint(num, 10, 31)
	if err != nil || strconv.FormatUint(n, 10) != num {
		return fmt.Errorf("unit name %s: %s is not a unit number", Quote(s, 24), Quote(num, 12))
	}
	return nil
}

// Quote quotes s for a message, escaping control characters and cutting
// it at max bytes, so that hostile input can neither flood nor repaint the
// operator's terminal.
func Quote(s string, max int) string {
	if max > 0 && len(s) > max {
		return strconv.Quote(s[:max]) + fmt.Sprintf("... (%d bytes)", len(s))
	}
	return strconv.Quote(s)
}
