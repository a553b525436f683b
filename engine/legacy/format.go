package legacy

import (
	"encoding/json"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/fixpoint/fixpoint/model"
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
	// Whole numbers print as integers in every format: port 6379, not
	// 6379.0 or 6.379e+03.
	value = model.WholeNumbers(value)
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
