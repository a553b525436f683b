package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/cmd/fixpoint/internal/bundle"
	"github.com/fixpoint/fixpoint/engine/charm"
)

// Caps on what import reads: a bundle is a page of YAML, an included
// option value a certificate or a script.
const (
	maxBundleSize  = 4 << 20
	maxIncludeSize = 1 << 20
)

func newImportCmd() *cobra.Command {
	var out, name, repo string
	var overlays []string
	var force bool
	cmd := &cobra.Command{
		Use:   "import BUNDLE.yaml [--output ENV.cue]",
		Short: "Turn a Juju bundle into an environment file",
		Long: `import turns a Juju bundle into a fixpoint environment file: applications
become services (charm paths stay paths, rewritten relative to the output
file, or to the current directory when it is printed; Charmhub and charm store names become bare names found in the charm
repository as NAME.charm or NAME/), num_units units (a bundle without it
runs none, as in Juju), options config, relations named relations with the
endpoints the bundle gives, resources given as files resources, and the
count of a storage directive storage.

What fixpoint has no counterpart for — expose, constraints, to and machines,
series and base, channel and revision, trust, bindings, annotations,
devices, a resource's store revision, a storage pool or size — is kept as
a comment beside its service and named in a warning on stderr.

Overlays — the bundle's later YAML documents, then each --overlay file —
are merged onto it first, as juju deploy --overlay merges them: relations
appended, applications added, merged or (given an empty value) removed with
their relations.

A bundle Juju would refuse is refused, every problem at its YAML line:
unknown keys, a relation of other than two endpoints, naming an unknown
application or given twice, a machine no placement uses, num_units on a
subordinate charm (when the charm is found, on its path or in
--repository), exposed-endpoints or
offers outside an overlay. Check the result with fixpoint vet.`,
		Example: `  fixpoint import bundle.yaml --output env.cue && fixpoint vet env.cue
  fixpoint import bundle.yaml --overlay aws-overlay.yaml --output env.cue
  FIXPOINT_CHARM_REPO=~/charms fixpoint import bundle.yaml > env.cue`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runImport(cmd.ErrOrStderr(), cmd.OutOrStdout(), importArgs{file: args[0], out: out, name: name, repo: repo, overlays: overlays, force: force})
		},
	}
	cmd.Flags().StringVar(&out, "output", "", "write the environment file here instead of to stdout (no -o: in fixpoint -o is --format)")
	cmd.Flags().StringVar(&name, "name", "", "the environment's name (default the bundle's name:, else its file name)")
	cmd.Flags().BoolVar(&force, "force", false, "overwrite the --output file if it exists")
	cmd.Flags().StringArrayVar(&overlays, "overlay", nil, "an overlay bundle to merge onto the bundle (repeatable, merged in order)")
	repositoryFlag(cmd, &repo)
	return cmd
}

// importArgs are import's argument and flags.
type importArgs struct {
	file, out, name, repo string
	overlays              []string
	force                 bool
}

// runImport converts the bundle at a.file and writes it to a.out (stdout
// when "").
func runImport(stderr, stdout io.Writer, a importArgs) error {
	file, out, name, repo, force := a.file, a.out, a.name, a.repo, a.force
	src, err := readBounded(file, maxBundleSize)
	if err != nil {
		return exitf(exitFailed, "import: %v", err)
	}
	var overlays []bundle.Overlay
	for _, o := range a.overlays {
		data, err := readBounded(o, maxBundleSize)
		if err != nil {
			return exitf(exitFailed, "import: overlay: %v", err)
		}
		overlays = append(overlays, bundle.Overlay{File: o, Src: data})
	}
	bundleDir, err := filepath.Abs(filepath.Dir(file))
	if err != nil {
		return exitf(exitFailed, "import: %v", err)
	}
	outDir, err := filepath.Abs(".")
	if out != "" {
		outDir, err = filepath.Abs(filepath.Dir(out))
	}
	if err != nil {
		return exitf(exitFailed, "import: %v", err)
	}
	if out != "" && !force {
		if _, err := os.Lstat(out); err == nil {
			return exitf(exitFailed, "import: %s exists; pass --force to overwrite it", out)
		}
	}
	rebase := func(p string) string { return rebasePath(p, bundleDir, outDir) }
	res, err := bundle.Convert(src, bundle.Options{
		File:     file,
		Name:     name,
		Rebase:   rebase,
		Overlays: overlays,
		ReadFile: func(p string) ([]byte, error) {
			if !filepath.IsAbs(p) {
				p = filepath.Join(bundleDir, p)
			}
			return readBounded(p, maxIncludeSize)
		},
		Subordinate: func(ref string) (bool, bool) {
			meta, err := charm.LoadMeta(ref, outDir, repo)
			if err != nil {
				return false, false // not found here: vet says so later
			}
			return meta.Subordinate, true
		},
	})
	var be *bundle.Error
	if errors.As(err, &be) {
		for _, p := range be.Problems {
			fmt.Fprintln(stderr, p.String())
		}
		return exitf(exitFailed, "import: %d problem%s; nothing written", len(be.Problems), vetPlural(len(be.Problems)))
	}
	if err != nil {
		return exitf(exitFailed, "import: %v", err)
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(stderr, w.String())
	}
	if out == "" {
		_, err := stdout.Write(res.CUE)
		return err
	}
	if err := writeAtomically(out, res.CUE); err != nil {
		return exitf(exitFailed, "import: %v", err)
	}
	fmt.Fprintf(stderr, "wrote %s; check it with: fixpoint vet %s\n", out, out)
	return nil
}

// rebasePath turns a path written in the bundle (relative to bundleDir)
// into one relative to outDir, as the environment file writes paths.
func rebasePath(p, bundleDir, outDir string) string {
	if filepath.IsAbs(p) {
		return p
	}
	abs := filepath.Join(bundleDir, filepath.FromSlash(p))
	r, err := filepath.Rel(outDir, abs)
	if err != nil {
		return filepath.ToSlash(abs)
	}
	r = filepath.ToSlash(r)
	if !strings.HasPrefix(r, "../") {
		r = "./" + r
	}
	return r
}

// readBounded reads a regular file of at most max bytes.
func readBounded(name string, max int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, max)
	}
	return data, nil
}

// writeAtomically writes data to name through a temporary file beside it,
// so that a failed import leaves no half-written environment file.
func writeAtomically(name string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), ".import-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}
