package main

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"
)

// formatFlag adds --format (-o, as kubectl spells it) for table, json and
// yaml output.
func formatFlag(cmd *cobra.Command, format *string) {
	cmd.Flags().StringVarP(format, "format", "o", "table", "output format: table, json or yaml")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"table", "json", "yaml"}, cobra.ShellCompDirectiveNoFileComp))
}

// checkFormat refuses an output format other than table, json or yaml.
func checkFormat(format string) error {
	if format != "table" && format != "json" && format != "yaml" {
		return exitf(exitFailed, "--format %q: use table, json or yaml", format)
	}
	return nil
}

// checkStreamFormat refuses a --format other than text or json, the two
// a stream of records (logs, debug-log, events) prints.
func checkStreamFormat(format string) error {
	if format != "text" && format != "json" {
		return exitf(exitFailed, "--format %q: use text or json", format)
	}
	return nil
}

// writeJSONStatus prints st as JSON: indented, or on one line when
// compact (one document per line, for --watch).
func writeJSONStatus(w io.Writer, st any, compact bool) error {
	enc := json.NewEncoder(w)
	// Redactions read <redacted sha256:…>, not \u003credacted.
	enc.SetEscapeHTML(false)
	if !compact {
		enc.SetIndent("", "  ")
	}
	return enc.Encode(st)
}

// writeYAML prints v as YAML with the field names of its JSON encoding.
func writeYAML(w io.Writer, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return err
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(numbers(tree)); err != nil {
		return err
	}
	return enc.Close()
}

// numbers turns JSON numbers into integers where they are, so YAML prints
// indexes as 1234567 rather than 1.234567e+06.
func numbers(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = numbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = numbers(e)
		}
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return n
		}
		f, _ := v.Float64()
		return f
	}
	return v
}
