package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/engine/charm"
	"github.com/fixpoint/fixpoint/raftstore/forward"
)

// Charm archives and resource files live on the control-plane nodes'
// disks, not in the Raft log (they are megabytes), each under its sha256
// content hash: one store each, handled alike. A node that receives a
// file pushes it to its peers; a node asked for one it lacks fetches it
// from a peer first, so an agent can download from whichever node it
// reaches.

// fileStore keeps this node's charm archives and resource files, serves
// them, and shares them with the peers.
type fileStore struct {
	node       Node
	dir        string
	peers      func(ctx context.Context) []string
	peerClient *forward.Client
	log        hclog.Logger
}

func (s *fileStore) routes(mux *router) {
	mux.HandleFunc("PUT /v1/charms/{hash}", s.putCharm)
	mux.HandleFunc("GET /v1/charms/{hash}", s.getCharm)
	mux.HandleFunc("PUT /v1/resources/{hash}", s.putResource)
	mux.HandleFunc("GET /v1/resources/{hash}", s.getResource)
}

// blobs is one content-addressed store of files.
type blobs struct {
	what  string // "charm" or "resource", for messages
	dir   string
	route string // the URL path before the hash
	max   int64  // the size cap
	ext   string // the files' extension on disk
}

func (s *fileStore) charmBlobs() blobs {
	return blobs{what: "charm", dir: s.dir, route: "/v1/charms/", max: charm.MaxSize, ext: ".tar"}
}

func (b blobs) path(hash string) string {
	return filepath.Join(b.dir, hash+b.ext)
}

// has reports whether this node holds the file of hash.
func (b blobs) has(hash string) bool {
	_, err := os.Stat(b.path(hash))
	return err == nil
}

// replicate pushes the file of hash to every peer, best effort: a peer
// that misses it fetches it when asked.
func (s *fileStore) replicate(b blobs, hash string) {
	if s.peers == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, peer := range s.peers(ctx) {
		f, err := os.Open(b.path(hash))
		if err != nil {
			return
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, forward.URL(peer, b.route+hash), f)
		if err != nil {
			f.Close()
			continue
		}
		// Forwarded: the peer keeps the copy and pushes it no further.
		resp, err := s.peerClient.Do(req, true)
		f.Close()
		if err != nil {
			s.log.Warn("push "+b.what+" to peer", b.what, hash, "peer", peer, "error", err)
			continue
		}
		forward.Close(resp)
	}
}

// fetchFromPeers gets the file of hash from the first peer that has it,
// verifying its content hash.
func (s *fileStore) fetchFromPeers(ctx context.Context, b blobs, hash string) error {
	if s.peers == nil {
		return fmt.Errorf("%s %s is not on this node", b.what, hash)
	}
	var errs []string
	for _, peer := range s.peers(ctx) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, forward.URL(peer, b.route+hash), nil)
		if err != nil {
			continue
		}
		// Forwarded: the peer answers from its own disk, never asks on.
		resp, err := s.peerClient.Do(req, true)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", peer, err))
			continue
		}
		err = receive(io.LimitReader(resp.Body, b.max+1), hash, b.path(hash), b.max)
		forward.Close(resp)
		if err == nil {
			return nil
		}
		errs = append(errs, fmt.Sprintf("%s: %v", peer, err))
	}
	return fmt.Errorf("%s %s is on no reachable node: %v", b.what, hash, errs)
}

// ensure makes the file of hash present on this node, fetching it from
// a peer when it is not.
func (s *fileStore) ensure(ctx context.Context, b blobs, hash string) error {
	if b.has(hash) {
		return nil
	}
	return s.fetchFromPeers(ctx, b, hash)
}

func (s *fileStore) putCharm(w http.ResponseWriter, r *http.Request) { s.putBlob(w, r, s.charmBlobs()) }

func (s *fileStore) getCharm(w http.ResponseWriter, r *http.Request) { s.getBlob(w, r, s.charmBlobs()) }

// putBlob stores an upload under its content hash and pushes it to the
// peers.
func (s *fileStore) putBlob(w http.ResponseWriter, r *http.Request, b blobs) {
	hash := r.PathValue("hash")
	if !validHash(hash) {
		writeError(w, http.StatusBadRequest, "%q is not a sha256 content hash", hash)
		return
	}
	if b.has(hash) {
		writeJSON(w, http.StatusOK, map[string]string{"hash": hash})
		return
	}
	if err := receive(io.LimitReader(r.Body, b.max+1), hash, b.path(hash), b.max); err != nil {
		writeError(w, http.StatusBadRequest, "%s %s: %v", b.what, hash, err)
		return
	}
	// A copy another node pushed is not pushed on again.
	if !forward.Forwarded(r) {
		go s.replicate(b, hash)
	}
	writeJSON(w, http.StatusCreated, map[string]string{"hash": hash})
}

// getBlob answers with the file of hash, fetched from a peer first when
// this node lacks it.
func (s *fileStore) getBlob(w http.ResponseWriter, r *http.Request, b blobs) {
	hash := r.PathValue("hash")
	if !validHash(hash) {
		writeError(w, http.StatusBadRequest, "%q is not a sha256 content hash", hash)
		return
	}
	f, err := os.Open(b.path(hash))
	if err != nil && !forward.Forwarded(r) {
		// A peer asking gets what this node has: a request is never
		// bounced around.
		if ferr := s.fetchFromPeers(r.Context(), b, hash); ferr != nil {
			writeError(w, http.StatusNotFound, "%v", ferr)
			return
		}
		f, err = os.Open(b.path(hash))
	}
	if err != nil {
		writeError(w, http.StatusNotFound, "%s %s is not on this node", b.what, hash)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = io.Copy(w, f)
}

func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for _, c := range h {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// receive stores an upload under path if it is at most max bytes and its
// content hash is hash; nothing is kept otherwise.
func receive(r io.Reader, hash, path string, max int64) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".upload-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if n > max {
		return fmt.Errorf("the file is larger than the %d-byte cap", max)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != hash {
		return fmt.Errorf("content hash is %s, not %s: the upload was corrupted or the hash is wrong", got, hash)
	}
	return os.Rename(f.Name(), path)
}
