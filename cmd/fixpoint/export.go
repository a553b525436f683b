package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/format"
	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

func newExportCmd() *cobra.Command {
	var r remote
	var format string
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Print the environment as it is desired now",
		Long: `export prints the environment's desired document — what the last apply
and the edits by command since (deploy, add-unit, remove-unit, relate,
config, ...) made it — as an environment file that vet accepts and apply
re-applies as "no changes". Charm and resource paths are written as they
were given: relative ones resolve from the environment file's directory
(apply) or the directory the edit ran in (deploy), so write the file
there. A user secret is written as where its values were read; config
options of type secret are shown redacted.

-o json prints the document as GET /v1/env answers it: its name, its
revision, the environment with its charms' hashes and resources' digests,
and the metadata of its charms by hash.`,
		Example: `  fixpoint export > env.cue && fixpoint plan -f env.cue
  fixpoint export -o json | jq .revision`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "cue" && format != "json" {
				return exitf(exitFailed, "--format %q: export writes cue or json", format)
			}
			c, err := r.client()
			if err != nil {
				return err
			}
			doc, err := readEnv(cmd.Context(), c)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if format == "json" {
				return writeJSONStatus(out, doc, false)
			}
			return writeEnvCUE(out, doc)
		},
	}
	r.flags(cmd)
	r.envFlag(cmd)
	cmd.Flags().StringVarP(&format, "format", "o", "cue", "output format: cue (an environment file) or json (the document as the API serves it)")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"cue", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// fileEnvironment is env as an environment file writes it: without what
// the CLI fills in from the files (charm hashes, resource digests).
func fileEnvironment(env *model.Environment) *model.Environment {
	out := model.EditCopy(env)
	for name, s := range out.Services {
		s.CharmHash, s.ResourceDigests = "", nil
		out.Services[name] = s
	}
	if len(out.Relations) == 0 {
		out.Relations = nil
	}
	return out
}

// writeEnvCUE writes doc's environment as a CUE environment file.
func writeEnvCUE(w io.Writer, doc *api.EnvDoc) error {
	data, err := json.Marshal(fileEnvironment(&doc.Env))
	if err != nil {
		return exitf(exitFailed, "export: %v", err)
	}
	v := cuecontext.New().CompileBytes(data)
	if err := v.Err(); err != nil {
		return exitf(exitFailed, "export: the document does not read as CUE: %v", err)
	}
	node := v.Syntax(cue.Final(), cue.Concrete(true))
	if lit, ok := node.(*ast.StructLit); ok {
		// A file's fields, not one struct literal.
		node = &ast.File{Decls: lit.Elts}
	}
	src, err := format.Node(node)
	if err != nil {
		return exitf(exitFailed, "export: %v", err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Environment %s at revision %d, exported by fixpoint export.\n// Relative charm and resource paths resolve from this file's directory.\n", doc.Name, doc.Revision)
	b.Write(src)
	if !bytes.HasSuffix(src, []byte("\n")) {
		b.WriteString("\n")
	}
	_, err = w.Write(b.Bytes())
	return err
}
