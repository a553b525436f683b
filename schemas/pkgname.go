package schemas

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"cuelang.org/go/cue/parser"
)

// packageName picks the package to load from the files' package clauses:
// "_" (the anonymous package) when none has one, the name when they agree.
// Mixing names, or named and unnamed files, is an error that says which
// files disagree, since CUE would otherwise silently load only some.
func packageName(files []string) (string, error) {
	name, first := "", ""
	for i, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		af, err := parser.ParseFile(f, src, parser.PackageClauseOnly)
		if err != nil {
			// Let the full load report syntax errors with positions.
			return "_", nil
		}
		n := af.PackageName()
		if n == "" {
			n = "_"
		}
		if i == 0 {
			name, first = n, f
			continue
		}
		if n != name {
			return "", fmt.Errorf("%s is package %s but %s is package %s: the files of one environment must all have the same package clause, or none", rel(first), name, rel(f), n)
		}
	}
	return name, nil
}

// rel returns name relative to the working directory when it is under it
// or one level up, else name unchanged: error positions stay short in the
// usual case and unambiguous otherwise.
func rel(name string) string {
	if !filepath.IsAbs(name) {
		return name
	}
	wd, err := os.Getwd()
	if err != nil {
		return name
	}
	r, err := filepath.Rel(wd, name)
	if err != nil || strings.HasPrefix(r, ".."+string(filepath.Separator)+"..") {
		return name
	}
	return r
}
