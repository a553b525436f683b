package legacy

import (
	"encoding/json"
	"math"
	"strings"

	"go.yaml.in/yaml/v3"
)

// formatFlag is the --format option the tools that print share.
var formatFlag = flagDef{name: "format"}

// checkFormat validates --format before a tool does anything.
func checkFormat(f *flags) error {
	switch name := f.str("format"); name {
	case "", "smart", "json", "yaml":
		return nil
	default:
		return usagef("invalid value %q for flag --format: unknown format %q", name, name)
	}
}

// render prints value in the format --format asked for; smart is the
// default, as in Juju.
func render(f *flags, value any) (string, error) {
	value = normalize(value)
	switch f.str("format") {
	case "json":
		b, err := json.Marshal(value)
		if err != nil {
			return "", err
		}
		return string(b) + "\n", nil
	case "yaml":
		return formatYAML(value)
	default:
		return formatSmart(value)
	}
}

// formatSmart is Juju's FormatSmart (juju/cmd output.go): strings
// untouched, string lists one per line, booleans as True/False "to match
// pyjuju", nothing at all for nil or "", anything else as YAML.
func formatSmart(value any) (string, error) {
	var s string
	switch v := value.(type) {
	case nil:
		return "", nil
	case string:
		s = v
	case []string:
		s = strings.Join(v, "\n")
	case bool:
		s = "False"
		if v {
			s = "True"
		}
	default:
		return formatYAML(value)
	}
	if s == "" {
		return "", nil
	}
	return s + "\n", nil
}

// formatYAML prints value as YAML with no trailing blank lines; nil prints
// nothing, as Juju's FormatYaml.
func formatYAML(value any) (string, error) {
	if value == nil {
		return "", nil
	}
	b, err := yaml.Marshal(value)
	if err != nil {
		return "", err
	}
	s := strings.TrimRight(string(b), "\n")
	if s == "" {
		return "", nil
	}
	return s + "\n", nil
}

// normalize turns the float64s JSON decoding leaves in config into
// integers where they are whole, so that port 6379 prints as 6379 and not
// 6379.0 or 6.379e+03 in any format.
func normalize(value any) any {
	switch v := value.(type) {
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return int64(v)
		}
		return v
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = normalize(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = normalize(x)
		}
		return out
	}
	return value
}
