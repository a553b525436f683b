package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"text/template"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/model"
)

func newCharmInitCmd() *cobra.Command {
	var dir, replace, module string
	var inModule bool
	cmd := &cobra.Command{
		Use:   "init NAME",
		Short: "Create a charm with a Go reconcile hook, from a template",
		Long: `init creates the directory NAME (inside --dir) holding a working charm:

  charm.cue              metadata: endpoints and config options
  src/main.go            main: charmapi.Main(reconcile)
  src/reconcile.go       the reconcile hook, a function of the universe
  src/reconcile_test.go  tests written with charmapi/charmtest

fixpoint builds src/ with "go build" when it packs the charm, inside the Go
module that encloses it. Inside a module that already requires
` + fixpointModule + `, the charm is a package of that module. Anywhere
else, fixpoint's own checkout included (unless --in-module asks for a
package of it), init makes the charm its own module: a go.mod requiring
` + fixpointModule + `, and "go mod tidy", which runs offline from the
module cache: the go.sum of the fixpoint checkout seeds the charm's. A
development build of fixpoint has no version to require: init then points
the requirement at a fixpoint checkout with a replace directive: the one
given by --replace, else the checkout enclosing the current directory,
else the checkout this binary was built from (go install ./cmd/fixpoint).`,
		Example: `  fixpoint charm init myapp && fixpoint charm test myapp
  fixpoint charm init myapp --dir charms --replace ~/src/fixpoint`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return charmInit(cmd.OutOrStdout(), args[0], dir, replace, module, inModule)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", ".", "directory to create the charm in")
	cmd.Flags().StringVar(&replace, "replace", "", "fixpoint checkout to build the charm against (replace directive in its go.mod)")
	cmd.Flags().StringVar(&module, "module", "", "module path when the charm gets its own go.mod (default: NAME)")
	cmd.Flags().BoolVar(&inModule, "in-module", false, "inside a fixpoint checkout, make the charm a package of fixpoint's own module instead of a module of its own")
	return cmd
}

func charmInit(out io.Writer, name, parent, replace, module string, inModule bool) error {
	if !model.ValidName(name) {
		return exitf(exitFailed, "charm name %q is invalid: use lower-case letters, digits and single dashes, starting with a letter (it becomes the service name)", name)
	}
	parentAbs, err := filepath.Abs(parent)
	if err != nil {
		return exitf(exitFailed, "%v", err)
	}
	target := filepath.Join(parentAbs, name)
	if _, err := os.Stat(target); err == nil {
		return exitf(exitFailed, "%s already exists; choose another name or remove it", target)
	}
	if replace != "" {
		if replace, err = filepath.Abs(replace); err != nil {
			return exitf(exitFailed, "%v", err)
		}
		if modulePath(filepath.Join(replace, "go.mod")) != fixpointModule {
			return exitf(exitFailed, "--replace %s: no fixpoint checkout there (its go.mod should say module %s)", replace, fixpointModule)
		}
	}

	// Decide where charmapi comes from before writing anything.
	// A module that requires fixpoint is the user's: the charm joins it.
	// fixpoint's own module only when asked: a charm written there by
	// accident would ride along with fixpoint's code.
	ownModule := true
	if mod := findUp(parentAbs, "go.mod"); mod != "" {
		switch {
		case modulePath(mod) == fixpointModule && inModule:
			ownModule = false
		case modulePath(mod) == fixpointModule && replace == "":
			replace = filepath.Dir(mod)
		case modulePath(mod) != fixpointModule && requires(mod, fixpointModule):
			ownModule = false
		}
	}
	if inModule && ownModule {
		return exitf(exitFailed, "--in-module: %s is not inside a fixpoint checkout", parentAbs)
	}
	var gomod string
	if ownModule {
		if module == "" {
			module = name
		}
		gomod, replace, err = charmGoMod(module, replace)
		if err != nil {
			return exitf(exitFailed, "%v", err)
		}
	}

	data := struct{ Name, Module string }{name, fixpointModule}
	for _, f := range charmFiles {
		var b bytes.Buffer
		if err := template.Must(template.New(f.path).Parse(f.text)).Execute(&b, data); err != nil {
			return err
		}
		if err := writeNew(filepath.Join(target, f.path), b.Bytes()); err != nil {
			return exitf(exitFailed, "%v", err)
		}
	}
	rel := displayPath(target)
	fmt.Fprintf(out, "created charm %s in %s\n", name, rel)
	for _, f := range charmFiles {
		fmt.Fprintf(out, "  %s\n", filepath.Join(rel, f.path))
	}
	if ownModule {
		if err := writeNew(filepath.Join(target, "go.mod"), []byte(gomod)); err != nil {
			return exitf(exitFailed, "%v", err)
		}
		fmt.Fprintf(out, "  %s (the charm is its own Go module)\n", filepath.Join(rel, "go.mod"))
		if replace != "" {
			seedGoSum(target, replace)
		}
		if msg, err := goModTidy(target); err != nil {
			fmt.Fprintf(out, "\nwarning: go mod tidy failed; run it in %s before building the charm:\n%s\n", rel, msg)
		}
	}
	fmt.Fprintf(out, `
next:
  (cd %[1]s/src && go test)      unit tests and an in-memory simulation
  fixpoint charm test %[1]s         every schedule of the packed charm, 2 units
  fixpoint charm pack %[1]s         build it and print its content hash
to deploy it, write an environment file next to the charm, e.g. env.cue:
  apiVersion: "fixpoint/v1"
  name:       %[2]q
  services: %[2]q: {charm: "./%[2]s", units: 2}
and run: fixpoint up -f env.cue --until-converged
`, rel, name)
	return nil
}

// charmGoMod is the go.mod of a charm that is its own module, and the
// fixpoint checkout it replaces fixpoint with ("" for a released version).
func charmGoMod(module, replace string) (string, string, error) {
	goVersion := strings.TrimPrefix(runtime.Version(), "go")
	if i := strings.IndexAny(goVersion, " -+"); i >= 0 {
		goVersion = goVersion[:i]
	}
	if replace == "" {
		if v := releaseVersion(); v != "" {
			return fmt.Sprintf("module %s\n\ngo %s\n\nrequire %s %s\n", module, goVersion, fixpointModule, v), "", nil
		}
		if wd, err := os.Getwd(); err == nil {
			if mod := findUp(wd, "go.mod"); mod != "" && modulePath(mod) == fixpointModule {
				replace = filepath.Dir(mod)
			}
		}
	}
	if replace == "" {
		replace = builtFrom()
	}
	if replace == "" {
		return "", "", fmt.Errorf("this fixpoint is a development build, with no released version for the charm's go.mod to require, and the checkout it was built from is gone; pass --replace /path/to/fixpoint (a checkout of %s) to build the charm against it, or create the charm inside a module that requires fixpoint", fixpointModule)
	}
	return fmt.Sprintf("module %s\n\ngo %s\n\nrequire %s v0.0.0-00010101000000-000000000000\n\nreplace %s => %s\n",
		module, goVersion, fixpointModule, fixpointModule, replace), replace, nil
}

// builtFrom is the fixpoint checkout this binary was built from, when the
// build recorded source paths (no -trimpath) and the checkout is still
// there: what `go install ./cmd/fixpoint` leaves behind.
func builtFrom() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return ""
	}
	root := filepath.Dir(filepath.Dir(filepath.Dir(file)))
	if modulePath(filepath.Join(root, "go.mod")) != fixpointModule {
		return ""
	}
	return root
}

// seedGoSum copies the fixpoint checkout's go.sum into the new module:
// the charm needs a subset of fixpoint's dependencies, whose checksums are
// then known, so go mod tidy looks nothing up and works offline.
func seedGoSum(dir, checkout string) {
	if data, err := os.ReadFile(filepath.Join(checkout, "go.sum")); err == nil {
		_ = os.WriteFile(filepath.Join(dir, "go.sum"), data, 0o644)
	}
}

// releaseVersion is the version of fixpoint this binary was built from,
// when it is one the module proxy can serve.
func releaseVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok || info.Main.Path != fixpointModule {
		return ""
	}
	v := info.Main.Version
	if v == "" || v == "(devel)" || strings.Contains(v, "+dirty") || strings.Contains(v, "-0.") || strings.HasPrefix(v, "v0.0.0-") {
		return ""
	}
	return v
}

// goModTidy resolves the new module's dependencies and writes go.sum.
// When the module proxy cannot be reached, a plain tidy fails on the test
// dependencies of dependencies (testify, ...) that nothing here builds;
// tidy -e then still records everything the charm and its tests need.
func goModTidy(dir string) (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "the go command is not installed", err
	}
	tidy := func(args ...string) (string, error) {
		cmd := exec.Command(goTool, append([]string{"mod", "tidy"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	out, err := tidy()
	if err == nil {
		return out, nil
	}
	if _, errE := tidy("-e"); errE == nil {
		return out, nil
	}
	return out, err
}

// modulePath reads the module path of a go.mod file, or "".
func modulePath(gomod string) string {
	f, err := os.Open(gomod)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module"); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// requires reports whether a go.mod requires module.
func requires(gomod, module string) bool {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require"))
		if len(f) >= 2 && f[0] == module {
			return true
		}
	}
	return false
}

func findUp(dir, name string) string {
	for {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// writeNew writes a file that must not exist yet, creating its directory.
func writeNew(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// displayPath is p relative to the working directory when it is inside it.
func displayPath(p string) string {
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	return p
}
