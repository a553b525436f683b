package main

import (
	"github.com/fixpoint/fixpoint/bench/internal/servers"
)

// server and cluster are the bench's three `fixpoint server` processes.
type (
	server  = servers.Server
	cluster = servers.Cluster
)

func startCluster(bin, root string) (*cluster, error) {
	return servers.Start(bin, root, plane, secure.ServerFlags)
}
