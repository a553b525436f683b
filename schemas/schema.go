package schemas

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/build"
)

// schemaFiles lists the embedded .cue files, sorted so every build of the
// package sees them in the same order.
func schemaFiles() []string {
	names, err := fs.Glob(FS, "*.cue")
	if err != nil {
		panic(err) // only a malformed pattern can fail
	}
	sort.Strings(names)
	return names
}

// schemaPrefix is the file name prefix of the embedded schemas in errors.
// It reads as the import path, so "fixpoint.dev/schemas/environment.cue:9:2"
// tells a user which shipped file a constraint came from.
const schemaPrefix = ImportPath + "/"

// buildSchemas compiles the embedded schema package in ctx. A fresh
// context per evaluation means this runs per call; it is cheap (a few
// small files), and sharing values across contexts is not allowed.
func buildSchemas(ctx *cue.Context) (cue.Value, error) {
	inst := build.NewContext().NewInstance(ImportPath, nil)
	for _, name := range schemaFiles() {
		src, err := FS.ReadFile(name)
		if err != nil {
			return cue.Value{}, err
		}
		if err := inst.AddFile(schemaPrefix+name, src); err != nil {
			return cue.Value{}, fmt.Errorf("embedded schema %s: %w", name, err)
		}
	}
	v := ctx.BuildInstance(inst)
	if err := v.Err(); err != nil {
		return cue.Value{}, fmt.Errorf("embedded schemas: %w", err)
	}
	return v, nil
}

// definition looks up a definition such as "#Environment" in the schemas.
func definition(ctx *cue.Context, name string) (cue.Value, error) {
	s, err := buildSchemas(ctx)
	if err != nil {
		return cue.Value{}, err
	}
	def := s.LookupPath(cue.ParsePath(name))
	if !def.Exists() {
		return cue.Value{}, fmt.Errorf("embedded schemas have no %s", name)
	}
	return def, nil
}

// isSchemaFile reports whether a position's file is one of the shipped
// schemas, embedded or imported by a user through the overlay; such
// positions say where a rule is written, not where the mistake is.
func isSchemaFile(name string) bool {
	name = path.Clean(strings.ReplaceAll(name, "\\", "/"))
	return strings.HasPrefix(name, schemaPrefix) || strings.Contains(name, "/cue.mod/pkg/"+schemaPrefix)
}
