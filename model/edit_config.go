package model

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseOption reads a value written on the command line (`config web
// port=8080`) as the option type typ takes it: an int, a float, a
// boolean (true/false), or the text itself for string and secret.
func ParseOption(typ, raw string) (any, error) {
	switch typ {
	case "int":
		n, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an int", raw)
		}
		return n, nil
	case "float":
		f, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", raw)
		}
		return f, nil
	case "boolean":
		switch strings.ToLower(strings.TrimSpace(raw)) {
		case "true", "yes", "on":
			return true, nil
		case "false", "no", "off":
			return false, nil
		}
		return nil, fmt.Errorf("%q is not a boolean (true or false)", raw)
	}
	return ConvertOption(typ, raw)
}

// EditConfig sets options of service name (values already typed, as YAML
// or JSON decodes them, or as written when raw) and resets those in reset
// to the charm's default by dropping them from the document, each checked
// against meta's options. An unknown option names the options the charm
// has; a key both set and reset is refused.
func EditConfig(env *Environment, name string, meta *CharmMeta, set map[string]any, raw map[string]string, reset []string) error {
	spec, ok := env.Services[name]
	if !ok {
		return unknownService(env, name)
	}
	unknown := func(k string) error {
		return fmt.Errorf("charm %s of service %s has no option %q (it has: %s)", meta.Name, name, k, listOr(sortedKeys(meta.Options)))
	}
	typed := map[string]any{}
	for _, k := range sortedKeys(set) {
		o, ok := meta.Options[k]
		if !ok {
			return unknown(k)
		}
		v, err := ConvertOption(o.Type, set[k])
		if err != nil {
			return fmt.Errorf("option %s of service %s (charm %s) is of type %s: %v", k, name, meta.Name, o.Type, err)
		}
		typed[k] = v
	}
	for _, k := range sortedKeys(raw) {
		o, ok := meta.Options[k]
		if !ok {
			return unknown(k)
		}
		v, err := ParseOption(o.Type, raw[k])
		if err != nil {
			return fmt.Errorf("option %s of service %s (charm %s) is of type %s: %v", k, name, meta.Name, o.Type, err)
		}
		typed[k] = v
	}
	for _, k := range reset {
		if _, ok := meta.Options[k]; !ok {
			return unknown(k)
		}
		if _, ok := typed[k]; ok {
			return fmt.Errorf("option %s is both set and reset; do one or the other", k)
		}
	}
	if spec.Config == nil && len(typed) > 0 {
		spec.Config = map[string]any{}
	}
	for k, v := range typed {
		spec.Config[k] = v
	}
	for _, k := range reset {
		delete(spec.Config, k)
	}
	if len(spec.Config) == 0 {
		spec.Config = nil
	}
	env.Services[name] = spec
	return nil
}
