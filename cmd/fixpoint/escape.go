package main

import (
	"fmt"
	"strings"
	"unicode"
)

// escapeControl shows control characters as Go escapes (\x1b, \u202e):
// hook output, status messages and errors come from hooks and agents, and
// must not move the cursor, recolor or rewrite the operator's terminal.
// keepNewlines keeps "\n" for multi-line text such as stderr.
func escapeControl(s string, keepNewlines bool) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return isUnsafe(r, keepNewlines) }) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !isUnsafe(r, keepNewlines):
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// isUnsafe reports control characters and the invisible format characters
// (bidirectional overrides) that can disguise text on a terminal.
func isUnsafe(r rune, keepNewlines bool) bool {
	if r == '\n' && keepNewlines {
		return false
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
}
