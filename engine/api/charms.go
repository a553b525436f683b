package api

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
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
