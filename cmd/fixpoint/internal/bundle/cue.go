package bundle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// write renders the converted bundle as an environment file.
func (c *conv) write(name string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Imported by fixpoint import from\n//   %s\n// Comments keep what fixpoint has no counterpart for. A charm named\n// without a path is found in the charm repository ($FIXPOINT_CHARM_REPO\n// or --repository) as NAME.charm or NAME/.\n", commentSafe(c.o.File))
	for _, h := range c.header {
		fmt.Fprintf(&b, "// %s\n", commentSafe(h))
	}
	fmt.Fprintf(&b, "apiVersion: \"fixpoint/v1\"\nname:       %s\n", quote(name))
	b.WriteString("\nservices: {\n")
	for _, n := range c.order {
		a := c.apps[n]
		fmt.Fprintf(&b, "\t%s: {\n", label(n))
		for _, line := range a.comment {
			fmt.Fprintf(&b, "\t\t// %s\n", commentSafe(line))
		}
		fmt.Fprintf(&b, "\t\tcharm: %s\n", quote(a.charm))
		fmt.Fprintf(&b, "\t\tunits: %d\n", a.units)
		writeMap(&b, "config", a.config, false)
		writeMap(&b, "resources", a.res, true)
		if len(a.storage) > 0 {
			b.WriteString("\t\tstorage: {\n")
			for _, s := range a.storage {
				fmt.Fprintf(&b, "\t\t\t%s: count: %s\n", label(s[0]), s[1])
			}
			b.WriteString("\t\t}\n")
		}
		b.WriteString("\t}\n")
	}
	b.WriteString("}\n")
	if len(c.rels) > 0 {
		b.WriteString("\nrelations: {\n")
		for _, r := range c.rels {
			fmt.Fprintf(&b, "\t%s: [%s, %s]\n", label(r.name), quote(r.ends[0]), quote(r.ends[1]))
		}
		b.WriteString("}\n")
	}
	return b.Bytes()
}

// writeMap writes one of a service's maps; values are CUE literals, or
// strings to quote when quoteValues.
func writeMap(b *bytes.Buffer, field string, kvs [][2]string, quoteValues bool) {
	if len(kvs) == 0 {
		return
	}
	fmt.Fprintf(b, "\t\t%s: {\n", field)
	for _, kv := range kvs {
		v := kv[1]
		if quoteValues {
			v = quote(v)
		}
		fmt.Fprintf(b, "\t\t\t%s: %s\n", label(kv[0]), v)
	}
	b.WriteString("\t\t}\n")
}

// identRe is a label CUE reads as itself unquoted.
var identRe = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9]*$`)

// cueKeywords may not be unquoted labels.
var cueKeywords = map[string]bool{"package": true, "import": true, "for": true, "in": true, "if": true, "let": true, "true": true, "false": true, "null": true, "div": true, "mod": true, "quo": true, "rem": true, "_": true}

// label writes a field name: bare when CUE reads it as itself, quoted
// otherwise (dashes, a leading _ or #, a keyword).
func label(s string) string {
	if identRe.MatchString(s) && !cueKeywords[s] {
		return s
	}
	return quote(s)
}

// quote writes s as a CUE string: JSON's escapes are CUE's.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// render writes a YAML value on one line, as JSON, for a comment.
func render(n *yaml.Node) string {
	var v any
	if err := n.Decode(&v); err != nil {
		return quote(n.Value)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return quote(fmt.Sprint(v))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// commentSafe keeps a comment on its line: a line break in it would end
// the comment and make the rest CUE.
func commentSafe(s string) string {
	return strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(s)
}
