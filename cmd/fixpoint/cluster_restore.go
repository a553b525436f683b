package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore"
)

// maxKeyFile bounds a cluster key file: 64 keys of 32 bytes in JSON.
const maxKeyFile = 64 << 10

func newClusterRestoreCmd() *cobra.Command {
	var (
		newCluster       bool
		dataDir          string
		keyFile          string
		token, tokenFile string
		joinFile         string
		newTokens        bool
	)
	cmd := &cobra.Command{
		Use:   "restore BACKUP --new-cluster --data-dir D --secrets-key FILE --token-file FILE",
		Short: "Start a new control plane from a backup when every server is lost",
		Long: `restore --new-cluster stages BACKUP (made by 'cluster snapshot save') in a
new server's empty data dir. The server then started on it with --bootstrap
begins a new cluster holding the backup's state, with itself as its only
member, on whatever addresses it is given; the other servers join it as
usual. Agents pointed at the new addresses (their --controller) carry on
with the machine credentials they keep, and units whose universe did not
change run nothing. Start the new servers with a --agent-ttl long enough
to point every agent at them: a machine silent past it goes lost and its
units' leadership moves.

--secrets-key is the secrets.key file kept from the lost cluster (a
server's data dir holds it as raft/secrets.key): the backup's secrets are
sealed under it, and restore refuses a key that does not open them all.
--token-file is the lost cluster's operator token, checked against the
backup; --new-tokens makes new operator and join tokens instead. The join
token is the backup's when --join-token-file gives it, otherwise a new one.
Both tokens are kept in the data dir as a bootstrap node keeps them, and a
new one is printed once.

To restore a backup into a running cluster, use 'cluster snapshot restore'.`,
		Example: `  fixpoint cluster restore backup.json --new-cluster --data-dir /var/lib/fixpoint \
      --secrets-key /root/fixpoint-secrets.key --token-file /etc/fixpoint/operator.token \
      --join-token-file /etc/fixpoint/join.token
  fixpoint server --node-id n1 --data-dir /var/lib/fixpoint --raft-addr 10.0.1.1:7000 --http-addr 10.0.1.1:7070 --bootstrap --agent-ttl 30m`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !newCluster {
				return exitf(exitFailed, "cluster restore starts a new cluster and needs --new-cluster; to restore %s into the running cluster, use `fixpoint cluster snapshot restore %s`", args[0], args[0])
			}
			if dataDir == "" {
				return exitf(exitFailed, "cluster restore needs --data-dir: the new, empty data dir of the server that bootstraps the new cluster")
			}
			if newTokens && (token != "" || tokenFile != "" || joinFile != "") {
				return exitf(exitFailed, "--new-tokens makes both tokens: give it without --token, --token-file or --join-token-file")
			}
			b, err := readBackupFile(args[0])
			if err != nil {
				return exitf(exitFailed, "%v", err)
			}
			var keys []byte
			if keyFile != "" {
				if keys, err = readKeyFile(keyFile); err != nil {
					return exitf(exitFailed, "%v", err)
				}
			}
			creds, minted, err := restoredCredentials(b.State(), newTokens, token, tokenFile, joinFile)
			if err != nil {
				return exitf(exitFailed, "%v", err)
			}
			if err := raftstore.StageRestore(filepath.Join(dataDir, "raft"), b, keys); err != nil {
				return exitf(exitFailed, "restore %s: %v", args[0], err)
			}
			for file, tok := range map[string]string{operatorTokenFile: creds.operator, joinTokenFile: creds.join} {
				if err := os.WriteFile(filepath.Join(dataDir, file), []byte(tok+"\n"), 0o600); err != nil {
					return exitf(exitFailed, "keep the %s: %v", file, err)
				}
			}
			st := b.State()
			fmt.Printf("staged %s in %s: index %d, %d units, %d machines, %d secrets\n", args[0], dataDir, b.Index(), len(st.Units), len(st.Machines), len(st.Secrets))
			if minted.operator {
				fmt.Printf("operator token: %s\n", creds.operator)
			}
			if minted.join {
				fmt.Printf("join token:     %s\n", creds.join)
			}
			if minted.operator || minted.join {
				fmt.Printf("(new; kept in %s; shown only this once)\n", dataDir)
			}
			fmt.Printf("start the new cluster's first server on it with --bootstrap, and a --agent-ttl that leaves time to point the agents at it:\n  fixpoint server --node-id ID --data-dir %s --raft-addr HOST:PORT --http-addr HOST:PORT --bootstrap --agent-ttl 30m\n", dataDir)
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&newCluster, "new-cluster", false, "start a new cluster from the backup (required: every server of the old one is lost)")
	f.StringVar(&dataDir, "data-dir", "", "the new, empty data dir of the server that bootstraps the new cluster")
	f.StringVar(&keyFile, "secrets-key", "", "the lost cluster's secrets.key file; required when the backup holds secrets")
	f.StringVar(&token, "token", "", "the lost cluster's operator token (default $FIXPOINT_TOKEN); shows in ps, prefer --token-file")
	f.StringVar(&tokenFile, "token-file", "", "file holding the lost cluster's operator token, readable by its owner only")
	f.StringVar(&joinFile, "join-token-file", "", "file holding the lost cluster's join token, to keep it (default: a new join token)")
	f.BoolVar(&newTokens, "new-tokens", false, "make a new operator token and join token instead of keeping the lost cluster's")
	return cmd
}

// readBackupFile reads and checks a backup file.
func readBackupFile(path string) (*raftstore.Backup, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := raftstore.ReadBackup(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// readKeyFile reads a cluster key file, refusing one that others than its
// owner may read: it opens every secret of the cluster.
func readKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--secrets-key: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("--secrets-key %s: %w", path, err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("--secrets-key %s has mode %04o: others than its owner can read the key that opens every secret; run `chmod 600 %s`", path, perm, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("--secrets-key %s: %w", path, err)
	}
	if len(data) > maxKeyFile {
		return nil, fmt.Errorf("--secrets-key %s is larger than %d bytes: it is not a fixpoint secrets.key", path, maxKeyFile)
	}
	return data, nil
}

// mintedTokens says which of the restored credentials are new.
type mintedTokens struct{ operator, join bool }

// restoredCredentials are the tokens the new cluster starts with: the
// lost cluster's, checked against the backup's hashes, or new ones, whose
// hashes then replace the backup's in st.
func restoredCredentials(st *model.State, newTokens bool, token, tokenFile, joinFile string) (credentials, mintedTokens, error) {
	have := st.Auth
	if have == nil {
		have = &model.Auth{}
	}
	var creds credentials
	var minted mintedTokens
	if newTokens {
		creds.operator, minted.operator = api.NewToken(), true
	} else {
		op, err := tokenFrom(token, tokenFile)
		if err != nil {
			return creds, minted, err
		}
		switch {
		case op == "":
			return creds, minted, fmt.Errorf("give the lost cluster's operator token (--token-file, or $FIXPOINT_TOKEN), or make new tokens with --new-tokens")
		case have.Operator != "" && api.HashToken(op) != have.Operator:
			return creds, minted, fmt.Errorf("the operator token given is not the one the backed-up cluster was bootstrapped with: give that one, or make new tokens with --new-tokens")
		}
		creds.operator = op
	}
	if joinFile != "" {
		join, err := readTokenFile(joinFile)
		if err != nil {
			return creds, minted, err
		}
		if have.Join == "" || api.HashToken(join) != have.Join {
			return creds, minted, fmt.Errorf("the join token in %s is not the backed-up cluster's (it was rotated or revoked): leave --join-token-file out to make a new one", joinFile)
		}
		creds.join = join
	} else {
		creds.join, minted.join = api.NewToken(), true
	}
	auth := *have
	auth.Operator = api.HashToken(creds.operator)
	if minted.join {
		auth.Join, auth.JoinExpires = api.HashToken(creds.join), 0
	}
	st.Auth = &auth
	return creds, minted, nil
}
