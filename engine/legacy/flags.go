package legacy

import (
	"fmt"
	"strconv"
	"strings"
)

// flagDef declares one option of a hook tool. Juju's tools use gnuflag,
// which accepts -name and --name alike, "=value" or the next argument, and
// flags interspersed with positional arguments; this parser does the same.
type flagDef struct {
	name    string   // canonical, e.g. "relation"
	aliases []string // e.g. "r"
	isBool  bool
}

// flags is a parsed command line.
type flags struct {
	values map[string]string // canonical name → value, for flags given
	args   []string          // positional arguments, in order
}

func (f *flags) has(name string) bool { _, ok := f.values[name]; return ok }

func (f *flags) str(name string) string { return f.values[name] }

func (f *flags) bool(name string) bool { return f.values[name] == "true" }

// usageError is a command line the tool cannot accept: exit 2, as Juju's.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// parseFlags splits args into flags and positional arguments. "--" ends
// the flags; a lone "-" is positional (relation-get's "all keys").
func parseFlags(args []string, defs []flagDef) (*flags, error) {
	byName := map[string]*flagDef{}
	for i := range defs {
		d := &defs[i]
		byName[d.name] = d
		for _, a := range d.aliases {
			byName[a] = d
		}
	}
	f := &flags{values: map[string]string{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			f.args = append(f.args, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			f.args = append(f.args, a)
			continue
		}
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		shown := a
		value, hasValue := "", false
		if k, v, ok := strings.Cut(name, "="); ok {
			name, value, hasValue = k, v, true
			shown = a[:len(a)-len(v)-1]
		}
		d, ok := byName[name]
		if !ok || name == "" {
			return nil, usagef("flag provided but not defined: %s", shown)
		}
		switch {
		case d.isBool && hasValue:
			b, err := strconv.ParseBool(value)
			if err != nil {
				return nil, usagef("invalid boolean value %q for flag %s", value, shown)
			}
			f.values[d.name] = strconv.FormatBool(b)
		case d.isBool:
			f.values[d.name] = "true"
		case hasValue:
			f.values[d.name] = value
		default:
			if i+1 >= len(args) {
				return nil, usagef("flag needs an argument: %s", shown)
			}
			i++
			f.values[d.name] = args[i]
		}
	}
	return f, nil
}

// checkEmpty refuses arguments a tool does not take, in Juju's words.
func checkEmpty(args []string) error {
	if len(args) == 0 {
		return nil
	}
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = strconv.Quote(a)
	}
	return usagef("unrecognized args: [%s]", strings.Join(quoted, " "))
}
