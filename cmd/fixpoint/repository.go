package main

import (
	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/engine/charm"
)

// repositoryFlag adds --repository to a command that loads charms.
func repositoryFlag(cmd *cobra.Command, v *string) {
	cmd.Flags().StringVar(v, "repository", "", "charm repository: the directory where a charm named by a bare NAME is found, as NAME"+charm.ArchiveSuffix+" or NAME/ (default $"+charm.RepositoryEnv+")")
}
