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
	version, commit, modified, built := "(devel)", "", false, ""
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
