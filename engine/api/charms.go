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

	"github.com/fixpoint/fixpoint/engine/charm"
	"github.com/fixpoint/fixpoint/raftstore/forward"
)

// Charm archives live on the control-plane nodes' disks, not in the Raft
// log (they are megabytes). A node that receives one pushes it to its
// peers; a node asked for one it lacks fetches it from a peer first, so an
// agent can download from whichever node it reaches.

// replicate pushes the archive of hash to every peer, best effort: a peer
// that misses it fetches it when asked.
func (s *Server) replicate(hash string) {
	if s.peers == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, peer := range s.peers(ctx) {
		f, err := os.Open(s.charmPath(hash))
		if err != nil {
			return
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, forward.URL(peer, "/v1/charms/"+hash), f)
		if err != nil {
			f.Close()
			continue
		}
		// Forwarded: the peer keeps the copy and pushes it no further.
		resp, err := s.peerClient.Do(req, true)
		f.Close()
		if err != nil {
			s.log.Warn("push charm to peer", "charm", hash, "peer", peer, "error", err)
			continue
		}
		forward.Close(resp)
	}
}

// fetchFromPeers gets the archive of hash from the first peer that has
// it, verifying its content hash.
func (s *Server) fetchFromPeers(ctx context.Context, hash string) error {
	if s.peers == nil {
		return fmt.Errorf("charm %s is not on this node", hash)
	}
	var errs []string
	for _, peer := range s.peers(ctx) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, forward.URL(peer, "/v1/charms/"+hash), nil)
		if err != nil {
			continue
		}
		// Forwarded: the peer answers from its own disk, never asks on.
		resp, err := s.peerClient.Do(req, true)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", peer, err))
			continue
		}
		err = receive(io.LimitReader(resp.Body, charm.MaxSize+1), hash, s.charmPath(hash))
		forward.Close(resp)
		if err == nil {
			return nil
		}
		errs = append(errs, fmt.Sprintf("%s: %v", peer, err))
	}
	return fmt.Errorf("charm %s is on no reachable node: %v", hash, errs)
}

func (s *Server) charmPath(hash string) string {
	return filepath.Join(s.charms, hash+".tar")
}

func (s *Server) putCharm(w http.ResponseWriter, r *http.Request) {
	hash := r.PathValue("hash")
	if !validHash(hash) {
		writeError(w, http.StatusBadRequest, "%q is not a sha256 content hash", hash)
		return
	}
	if _, err := os.Stat(s.charmPath(hash)); err == nil {
		writeJSON(w, http.StatusOK, map[string]string{"hash": hash})
		return
	}
	if err := receive(io.LimitReader(r.Body, charm.MaxSize+1), hash, s.charmPath(hash)); err != nil {
		writeError(w, http.StatusBadRequest, "charm %s: %v", hash, err)
		return
	}
	// A copy another node pushed is not pushed on again.
	if !forward.Forwarded(r) {
		go s.replicate(hash)
	}
	writeJSON(w, http.StatusCreated, map[string]string{"hash": hash})
}

func (s *Server) getCharm(w http.ResponseWriter, r *http.Request) {
	hash := r.PathValue("hash")
	if !validHash(hash) {
		writeError(w, http.StatusBadRequest, "%q is not a sha256 content hash", hash)
		return
	}
	f, err := os.Open(s.charmPath(hash))
	if err != nil && !forward.Forwarded(r) {
		// A peer asking gets what this node has: a request is never
		// bounced around.
		if ferr := s.fetchFromPeers(r.Context(), hash); ferr != nil {
			writeError(w, http.StatusNotFound, "%v", ferr)
			return
		}
		f, err = os.Open(s.charmPath(hash))
	}
	if err != nil {
		writeError(w, http.StatusNotFound, "charm %s is not on this node", hash)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/x-tar")
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

// receive stores an uploaded archive under path if its content hash is
// hash; nothing is kept otherwise.
func receive(r io.Reader, hash, path string) error {
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
	if n > charm.MaxSize {
		return fmt.Errorf("archive is larger than the %d-byte cap", charm.MaxSize)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != hash {
		return fmt.Errorf("content hash is %s, not %s: the upload was corrupted or the hash is wrong", got, hash)
	}
	return os.Rename(f.Name(), path)
}
