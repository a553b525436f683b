package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mdLink is a markdown link's target.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocsStayInTheRepository: README and docs/ link to files that exist
// in the repository, and carry the contract they rely on (docs/contract.md)
// instead of sending the reader to a design repository beside it.
func TestDocsStayInTheRepository(t *testing.T) {
	files, err := filepath.Glob(repo("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, repo("README.md"))
	if len(files) < 3 {
		t.Fatalf("found only %v", files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(repo(), f)
		if strings.Contains(string(data), "shared/DESIGN.md") {
			t.Errorf("%s points at the design repository's DESIGN.md; link docs/contract.md", name)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(data), -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path := filepath.Join(filepath.Dir(f), target)
			rel, err := filepath.Rel(repo(), path)
			if err != nil || strings.HasPrefix(rel, "..") {
				t.Errorf("%s links %s, outside the repository", name, m[1])
				continue
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s links %s, which does not exist", name, m[1])
			}
		}
	}
	if _, err := os.Stat(repo("docs", "contract.md")); err != nil {
		t.Errorf("docs/contract.md: %v", err)
	}
}
