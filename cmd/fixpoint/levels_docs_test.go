package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/model"
)

// TestDocsListEveryFeatureLevel: docs/operating.md's table of feature
// levels has one row per row of model's level table, with its level, so
// that operators read the table the leader's check reads.
func TestDocsListEveryFeatureLevel(t *testing.T) {
	doc := readFile(t, repo("docs", "operating.md"))
	_, table, ok := strings.Cut(doc, "### Feature levels")
	if !ok {
		t.Fatal(`docs/operating.md has no "### Feature levels" section`)
	}
	rows := 0
	for _, l := range strings.Split(table, "\n") {
		if strings.HasPrefix(l, "| `") {
			rows++
		}
	}
	features := model.Features()
	if rows != len(features) {
		t.Errorf("docs/operating.md lists %d entries, model/levels.go has %d", rows, len(features))
	}
	for _, f := range features {
		kind := f.Kind
		if f.Field != "" {
			kind += "." + f.Field
		}
		if row := fmt.Sprintf("| `%s` | %d | %s |", kind, f.Level, f.What); !strings.Contains(table, row) {
			t.Errorf("docs/operating.md lacks the row %s", row)
		}
	}
}
