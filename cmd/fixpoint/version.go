package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// versionString says which fixpoint this is: the module version, the
// commit it was built from (when the build recorded it) and the Go
// version, for bug reports and for telling two installed binaries apart.
func versionString() string {
	version, commit, modified, built := buildInfo()
	switch {
	case commit == "":
		commit = "unknown (built without VCS stamping, e.g. -buildvcs=false)"
	case modified:
		commit += " (with local changes)"
	}
	out := fmt.Sprintf("fixpoint %s\ncommit   %s\n", version, commit)
	if built != "" {
		out += fmt.Sprintf("time     %s\n", built)
	}
	return out + fmt.Sprintf("go       %s %s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// shortVersion is the build in one word, as a server advertises it to
// the others: "v0.4.0", "(devel)+19c0248a1b2c", "+dirty" with local
// changes.
func shortVersion() string {
	version, commit, modified, _ := buildInfo()
	if commit != "" {
		version += "+" + commit[:min(12, len(commit))]
	}
	if modified {
		version += "+dirty"
	}
	return version
}

// buildInfo is what the build recorded: module version, VCS commit,
// whether the tree had local changes, and the commit's time.
func buildInfo() (version, commit string, modified bool, built string) {
	version = "(devel)"
	if info, ok := debug.ReadBuildInfo(); ok {
		if info.Main.Version != "" {
			version = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			case "vcs.time":
				built = s.Value
			}
		}
	}
	return version, commit, modified, built
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the fixpoint version, the commit it was built from and the Go version",
		Long: `version prints the module version of this binary (or "(devel)" for a build
from a checkout), the VCS commit the build recorded, and the Go toolchain and
platform. fixpoint --version prints the same.`,
		Example: `  fixpoint version
  fixpoint --version`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), versionString())
			return nil
		},
	}
}
