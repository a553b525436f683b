package raftstore

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// benchCluster starts n nodes, the first bootstrapped, and waits until all
// know the leader.
func benchCluster(b *testing.B, n int) []*node {
	log := testLogger(b)
	nodes := make([]*node, n)
	for i := range nodes {
		nodes[i] = newNode(b, log, fmt.Sprintf("n%d", i+1))
		if i == 0 {
			nodes[i].start(true, nil)
		} else {
			nodes[i].start(false, []string{nodes[0].httpAddr})
		}
	}
	rafttest.Eventually(b, 20*time.Second, "leader known", func() error {
		for _, x := range nodes {
			if x.s.LeaderHTTP() == "" {
				return fmt.Errorf("%s knows no leader", x.id)
			}
		}
		return voters(nodes, n)
	})
	return nodes
}

// BenchmarkApply: one writer at a time, on the leader of one node and of
// three, and through a follower of three (one HTTP hop more).
func BenchmarkApply(b *testing.B) {
	for _, c := range []struct {
		name  string
		nodes int
		via   string // leader or follower
	}{{"1node", 1, "leader"}, {"3nodes-leader", 3, "leader"}, {"3nodes-follower", 3, "follower"}} {
		b.Run(c.name, func(b *testing.B) {
			nodes := benchCluster(b, c.nodes)
			leader, err := leaderOf(nodes...)
			if err != nil {
				b.Fatal(err)
			}
			via := leader
			if c.via == "follower" {
				via = others(nodes, leader)[0]
			}
			ctx := ctxT(b, 5*time.Minute)
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if _, err := via.s.Apply(ctx, benchCmd(int64(i))); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkApplyParallel: many writers on the leader of three nodes, where
// raft batches entries into one disk write.
func BenchmarkApplyParallel(b *testing.B) {
	nodes := benchCluster(b, 3)
	leader, err := leaderOf(nodes...)
	if err != nil {
		b.Fatal(err)
	}
	ctx := ctxT(b, 5*time.Minute)
	var seq atomic.Int64
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := leader.s.Apply(ctx, benchCmd(seq.Add(1))); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkLinearize: a linearizable read on the leader and on a follower
// of three nodes.
func BenchmarkLinearize(b *testing.B) {
	nodes := benchCluster(b, 3)
	leader, err := leaderOf(nodes...)
	if err != nil {
		b.Fatal(err)
	}
	ctx := ctxT(b, 5*time.Minute)
	for _, via := range []*node{leader, others(nodes, leader)[0]} {
		name := "leader"
		if via != leader {
			name = "follower"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if err := via.s.Linearize(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchCmd changes one of eight machines' address: the state keeps its
// size, so the figures measure replication rather than the model, whose
// placement pass sorts every machine on every command.
func benchCmd(i int64) *model.Command {
	return machineCmd(fmt.Sprintf("m%d", i%8), fmt.Sprintf("10.0.%d.%d", i/250%250, i%250))
}
