package raftstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/keyring"
)

// A new cluster from a backup, when every server is lost: the backup is
// staged in a fresh data dir (StageRestore), and the node that bootstraps
// on it starts from a Raft snapshot of the backup's state instead of an
// empty log (plantSeed). The snapshot sits at the backup's index and
// names this node as the only voter, so
//   - every index the restored state holds is below the new log's, as
//     model's bookkeeping (units', relations' and bags' indexes, the
//     change journal) expects of a log that only grows;
//   - the old membership, which the backup does not hold (it lives in
//     the lost servers' Raft logs), is replaced by this node; the others
//     join it as they join any cluster.
//
// raft.RecoverCluster does not fit: it refuses a data dir without state,
// and it is for surviving servers whose own logs it commits wholesale.
// Bootstrapping an empty log and then proposing the backup (what
// `cluster snapshot restore` does in a running cluster) would put the
// restored state's indexes ahead of the log's.

// SeedFile is the backup StageRestore keeps in a data dir until the
// bootstrap that starts the new cluster from it.
const SeedFile = "restore.json"

// Backup is a backup document read and checked (ReadBackup).
type Backup struct {
	doc *document
}

// ReadBackup reads and checks a backup made by SaveBackup.
func ReadBackup(r io.Reader) (*Backup, error) {
	lr := &io.LimitedReader{R: r, N: maxBackup + 1}
	d, err := decodeDocument(lr)
	switch {
	case lr.N <= 0:
		return nil, fmt.Errorf("larger than %d bytes, which no fixpoint backup is", maxBackup)
	case err != nil:
		return nil, fmt.Errorf("not a fixpoint backup: %w", err)
	}
	return &Backup{doc: d}, nil
}

// Index is the index the backed-up cluster had applied.
func (b *Backup) Index() uint64 { return b.doc.Index }

// State is the backed-up state of the default environment, which
// StageRestore stages as it is then (a caller may replace its credentials
// first: every other environment's copy of them is taken from it).
func (b *Backup) State() *model.State { return b.doc.State }

// sealedBy lists the ids of the keys the secret contents of d's
// environments are sealed under.
func sealedBy(d *document) []string {
	var ids []string
	for _, st := range d.cluster().States() {
		for _, s := range st.Secrets {
			for _, r := range s.Revisions {
				if id := keyring.SealedBy(r.Sealed); !slices.Contains(ids, id) {
					ids = append(ids, id)
				}
			}
		}
	}
	slices.Sort(ids)
	return ids
}

// StageRestore makes dataDir, a server data dir that has never held Raft
// state, the start of a new cluster holding the backup's state: the next
// Open with Bootstrap starts from it. keys is the lost cluster's KeyFile;
// it must open every secret content the backup holds, and it may be nil
// only when the backup holds none (the bootstrap then makes a new key).
func StageRestore(dataDir string, b *Backup, keys []byte) error {
	if _, err := os.Stat(filepath.Join(dataDir, "raft.db")); err == nil {
		return fmt.Errorf("%s already holds a server's Raft state: restore into a new, empty data dir", dataDir)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return fmt.Errorf("stage the backup: %w", err)
	}
	if err := checkKeys(b, keys); err != nil {
		return err
	}
	if keys != nil {
		kr, err := keyring.Parse(keys)
		if err != nil {
			return err
		}
		if err := kr.Keep(dataDir); err != nil {
			return err
		}
	}
	tmp, err := os.CreateTemp(dataDir, ".restore-*.json")
	if err != nil {
		return fmt.Errorf("stage the backup: %w", err)
	}
	defer os.Remove(tmp.Name())
	d := b.doc
	err = writeDocument(tmp, d.Index, d.Level, nil, d.cluster(), d.Logs, d.Events)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dataDir, SeedFile))
	}
	if err != nil {
		return fmt.Errorf("stage the backup in %s: %w", dataDir, err)
	}
	return nil
}

// checkKeys makes sure keys open every secret content of the backup: a
// new cluster that can not open them would hand units nothing.
func checkKeys(b *Backup, keys []byte) error {
	if keys == nil {
		if ids := sealedBy(b.doc); len(ids) > 0 {
			return fmt.Errorf("the backup holds secrets sealed under cluster key %s: give the %s file kept from the lost cluster (a server's data dir holds it as raft/%s)",
				strings.Join(ids, ", "), KeyFile, KeyFile)
		}
		return nil
	}
	kr, err := keyring.Parse(keys)
	if err != nil {
		return fmt.Errorf("the cluster key: %w", err)
	}
	return opensAll(b.doc, kr)
}

// opensAll reports the first secret content of any of d's environments
// that kr does not open.
func opensAll(d *document, kr model.Sealer) error {
	c := d.cluster()
	for i, st := range c.States() {
		for _, id := range slices.Sorted(maps.Keys(st.Secrets)) {
			for _, r := range st.Secrets[id].Revisions {
				if _, err := model.OpenContent(kr, id, r.Sealed); err != nil {
					if i > 0 {
						return fmt.Errorf("environment %s: secret %s revision %d: %w", st.Name, id, r.Rev, err)
					}
					return fmt.Errorf("secret %s revision %d: %w", id, r.Rev, err)
				}
			}
		}
	}
	return nil
}

// pendingSeed returns the backup staged in cfg's data dir for this start
// to plant, nil when there is none or it is planted already.
func pendingSeed(cfg *Config, hasState bool, log hclog.Logger) (*document, error) {
	seed, err := readSeed(cfg.DataDir)
	switch {
	case err != nil || seed == nil:
		return nil, err
	case hasState:
		// The seed is in the first snapshot already: a crash came
		// between planting it and removing its file.
		log.Info("the staged backup is already this node's state; removing it", "file", SeedFile)
		_ = os.Remove(filepath.Join(cfg.DataDir, SeedFile))
		return nil, nil
	case !cfg.Bootstrap:
		return nil, fmt.Errorf("node %s: %s holds a backup staged for a new cluster (%s): start this node with --bootstrap to begin the new cluster from it, or remove the file to join another cluster",
			cfg.NodeID, cfg.DataDir, SeedFile)
	}
	return seed, nil
}

// readSeed returns the backup staged in dataDir, nil when there is none.
func readSeed(dataDir string) (*document, error) {
	f, err := os.Open(filepath.Join(dataDir, SeedFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("the staged backup: %w", err)
	}
	defer f.Close()
	d, err := decodeDocument(f)
	if err != nil {
		return nil, fmt.Errorf("the staged backup %s: %w", f.Name(), err)
	}
	return d, nil
}

// plantSeed writes the staged backup as the node's first snapshot, at the
// backup's index, with this node as the cluster's only voter and in its
// registry (see the comment at the top). The keyring is open: the key
// staged with the backup may have been lost since.
func (s *Store) plantSeed(d *document, snaps raft.SnapshotStore, trans raft.Transport) error {
	if err := opensAll(d, s.keys); err != nil {
		return fmt.Errorf("node %s: the staged backup's secrets do not open with %s in %s (stage the backup again with the lost cluster's key): %w", s.cfg.NodeID, KeyFile, s.cfg.DataDir, err)
	}
	self := nodeInfo{ID: s.cfg.NodeID, RaftAddr: s.raftAddr, HTTPAddr: s.cfg.HTTPAddr}
	index := max(d.Index, d.State.Index, 1)
	conf := raft.Configuration{Servers: []raft.Server{{
		Suffrage: raft.Voter, ID: raft.ServerID(self.ID), Address: raft.ServerAddress(self.RaftAddr),
	}}}
	sink, err := snaps.Create(raft.SnapshotVersionMax, index, 1, conf, 1, trans)
	if err != nil {
		return fmt.Errorf("seed the new cluster: %w", err)
	}
	if err := writeDocument(sink, index, d.Level, map[string]nodeInfo{self.ID: self}, d.cluster(), d.Logs, d.Events); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("seed the new cluster: %w", err)
	}
	if err := sink.Close(); err != nil {
		return fmt.Errorf("seed the new cluster: %w", err)
	}
	s.log.Info("starting a new cluster from the staged backup", "index", index)
	return nil
}

// seedPlanted removes the staged backup once raft runs on its snapshot.
func (s *Store) seedPlanted() {
	if err := os.Remove(filepath.Join(s.cfg.DataDir, SeedFile)); err != nil {
		s.log.Warn("could not remove the staged backup; it is ignored from now on", "file", SeedFile, "error", err)
	}
}
