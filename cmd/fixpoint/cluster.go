package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore"
)

func newClusterCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Inspect and change the control plane's membership; back it up and restore it",
	}
	cmd.AddCommand(newClusterMembersCmd(), newClusterRemoveCmd(), newClusterSnapshotCmd(), newClusterRestoreCmd(), newClusterUpgradeCmd())
	return cmd
}

func newClusterMembersCmd() *cobra.Command {
	var r remote
	var format string
	cmd := &cobra.Command{
		Use:   "members",
		Short: "List control-plane nodes: id, address, role, last contact, applied index, build",
		Long: `members lists the control-plane nodes: id, Raft and HTTP addresses, role,
voter, LAST CONTACT (how long ago the node last heard from the leader; for a
node that does not answer, how long ago the leader last heard from it),
applied index, VERSION (the node's build; "-" for v0.3.0 and older, which do
not say) and LEVEL (its build's feature level). Under the table: the
cluster's feature level and what to do about a mixed cluster (see "Upgrading"
in docs/operating.md). --format json adds "unreachable": true for a node that
does not answer, and "halted" for one that stopped applying the log.`,
		Example: `  fixpoint cluster members --controller 127.0.0.1:7070`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := r.client()
			if err != nil {
				return err
			}
			var members []raftstore.Member
			if err := c.Do(cmd.Context(), http.MethodGet, "/v1/raft/members", nil, &members); err != nil {
				return exitf(exitFailed, "members: %v", err)
			}
			if format == "json" {
				enc := json.NewEncoder(os.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(members)
			}
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tRAFT\tHTTP\tROLE\tVOTER\tLAST CONTACT\tAPPLIED\tVERSION\tLEVEL")
			for _, m := range members {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%v\t%s\t%d\t%s\t%s\n", m.ID, m.RaftAddr, orDash(m.HTTPAddr), m.Role, m.Voter, lastContact(m), m.AppliedIndex, orDash(oneLine(m.Version)), memberLevel(m))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			// A server of v0.3.0 or older has no level endpoint: the
			// table is all it can say.
			var cl model.ClusterLevel
			if err := c.Do(cmd.Context(), http.MethodGet, "/v1/raft/level", nil, &cl); err == nil {
				for _, l := range clusterLevelLines(&cl) {
					fmt.Println(l)
				}
			}
			return nil
		},
	}
	r.flags(cmd)
	cmd.Flags().StringVarP(&format, "format", "o", "table", "output format: table or json")
	return cmd
}

// lastContact is a member's LAST CONTACT: its own account, or for one
// that does not answer the leader's, said as such.
func lastContact(m raftstore.Member) string {
	switch {
	case !m.Unreachable:
		return m.LastContact.Round(time.Millisecond).String()
	case m.LastContact > 0:
		return m.LastContact.Round(time.Second).String() + " ago, not answering"
	}
	return "unknown, not answering"
}

// memberLevel is a member's LEVEL: "-" when it did not answer.
func memberLevel(m raftstore.Member) string {
	if m.Level == 0 {
		return "-"
	}
	s := strconv.Itoa(int(m.Level))
	if m.Halted != "" {
		s += " (halted)"
	}
	return s
}

func newClusterUpgradeCmd() *cobra.Command {
	var r remote
	cmd := &cobra.Command{
		Use:   "upgrade",
		Short: "Raise the cluster's feature level once every server runs the new build",
		Long: `upgrade raises the cluster's feature level to the highest level a server's
build has, once every server runs it, so that commands that need the new
level are accepted. Until then it is refused, naming the servers still to
upgrade ("node n1 runs feature level 1, this command needs 2: upgrade n1
first"). After it, no server can go back to an older build: roll a node back
only before (see "Upgrading" in docs/operating.md). Running it again does
nothing.`,
		Example: `  fixpoint cluster members     # every server at the new VERSION and LEVEL?
  fixpoint cluster upgrade`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := r.client()
			if err != nil {
				return err
			}
			var ans struct {
				Level model.Level `json:"level"`
			}
			if err := c.Do(cmd.Context(), http.MethodPost, "/v1/raft/upgrade", []byte("{}"), &ans); err != nil {
				return exitf(exitFailed, "upgrade: %v", err)
			}
			fmt.Printf("cluster at feature level %d\n", ans.Level)
			return nil
		},
	}
	r.flags(cmd)
	return cmd
}

func newClusterRemoveCmd() *cobra.Command {
	var r remote
	cmd := &cobra.Command{
		Use:     "remove NODE",
		Short:   "Remove a node from the control plane (through the leader)",
		Example: `  fixpoint cluster remove n3`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := r.client()
			if err != nil {
				return err
			}
			body, _ := json.Marshal(map[string]string{"id": args[0]})
			if err := c.Do(cmd.Context(), http.MethodPost, "/v1/raft/remove", body, nil); err != nil {
				return exitf(exitFailed, "remove %s: %v", args[0], err)
			}
			fmt.Printf("removed %s\n", args[0])
			return nil
		},
	}
	r.flags(cmd)
	return cmd
}

func newClusterSnapshotCmd() *cobra.Command {
	var r remote
	cmd := &cobra.Command{
		Use:   "snapshot [save FILE | restore FILE]",
		Short: "Take a Raft snapshot now, or save/restore a backup of the whole state",
		Example: `  fixpoint cluster snapshot
  fixpoint cluster snapshot save backup.json
  fixpoint cluster snapshot restore backup.json`,
		Args: cobra.RangeArgs(0, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := r.client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			switch {
			case len(args) == 0:
				if err := c.Do(ctx, http.MethodPost, "/v1/raft/snapshot", []byte("{}"), nil); err != nil {
					return exitf(exitFailed, "snapshot: %v", err)
				}
				fmt.Println("snapshot taken")
			case len(args) == 2 && args[0] == "save":
				// The backup holds relation passwords and credentials' hashes.
				f, err := createPrivate(args[1])
				if err != nil {
					return exitf(exitFailed, "%v", err)
				}
				err = c.Do(ctx, http.MethodGet, "/v1/raft/backup", nil, f)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					os.Remove(args[1])
					return exitf(exitFailed, "save backup: %v", err)
				}
				fmt.Printf("backup written to %s\n", args[1])
			case len(args) == 2 && args[0] == "restore":
				data, err := os.ReadFile(args[1])
				if err != nil {
					return exitf(exitFailed, "%v", err)
				}
				if err := c.Do(ctx, http.MethodPost, "/v1/raft/restore", data, nil); err != nil {
					return exitf(exitFailed, "restore %s: %v", args[1], err)
				}
				fmt.Printf("state restored from %s\n", args[1])
			default:
				return exitf(exitFailed, "usage: cluster snapshot [save FILE | restore FILE]")
			}
			return nil
		},
	}
	r.flags(cmd)
	return cmd
}
