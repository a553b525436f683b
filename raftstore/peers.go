package raftstore

import (
	"net"
)

// PeerHosts lists the hosts of the members' Raft addresses in this node's
// copy of the configuration, this node's own included: where the
// requests other nodes relay for their clients come from.
func (s *Store) PeerHosts() []string {
	f := s.raft.GetConfiguration()
	if f.Error() != nil {
		return nil
	}
	var out []string
	for _, srv := range f.Configuration().Servers {
		if host, _, err := net.SplitHostPort(string(srv.Address)); err == nil {
			out = append(out, host)
		}
	}
	return out
}
