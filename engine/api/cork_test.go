package api_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

// writeLog keeps the writes made on a node's connections that carry a
// test's marker, and holds every write while a test holds them.
type writeLog struct {
	mu     sync.Mutex
	marker []byte
	seen   [][]byte
	held   chan struct{} // closed to let the held writes go
}

// hold holds the node's writes until the test ends, as a relay or a
// connection that stalls would.
func (l *writeLog) hold(t *testing.T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held = make(chan struct{})
	held := l.held
	t.Cleanup(func() { close(held) })
}

func (l *writeLog) watch(marker string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.marker, l.seen = []byte(marker), nil
}

func (l *writeLog) note(p []byte) {
	l.mu.Lock()
	held := l.held
	if len(l.marker) > 0 && bytes.Contains(p, l.marker) {
		l.seen = append(l.seen, bytes.Clone(p))
	}
	l.mu.Unlock()
	if held != nil {
		<-held
	}
}

// marked returns the writes seen with the marker.
func (l *writeLog) marked() [][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seen
}

// A work answer larger than net/http's 4 KiB buffer leaves the leader in
// one write, asked of the leader itself or relayed by a follower, and
// the follower relays it in one write too: the write that carries the
// answer's start carries its end.
func TestAWorkAnswerIsOneWrite(t *testing.T) {
	leader, follower := cluster(t)
	ctx := ctxT(t)
	for _, m := range []string{"m1", "m2"} {
		if _, err := leader.store.Apply(ctx, &model.Command{Op: model.OpMachine, Machine: &model.RegisterMachine{Name: m, Address: "10.0.0.1"}}); err != nil {
			t.Fatal(err)
		}
	}
	const marker = "answer-marker-"
	blob := marker + strings.Repeat("x", 6<<10) // a universe past 4 KiB
	two := 2
	env := model.Environment{APIVersion: model.APIVersion, Name: "cork", Services: map[string]model.ServiceSpec{
		"a": {CharmHash: "h-x", Units: &two, Placement: []string{"m1", "m2"}, Config: map[string]any{"blob": blob}},
	}}
	charms := map[string]*model.Charm{"h-x": {Hash: "h-x", Meta: model.CharmMeta{Name: "x",
		Options: map[string]model.Option{"blob": {Type: "string"}}}}}
	if _, err := leader.store.Apply(ctx, &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: env, Charms: charms}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		machine string
		via     *testNode
		hops    []*testNode // the nodes whose writes carry the answer
	}{{"m1", leader, []*testNode{leader}}, {"m2", follower, []*testNode{leader, follower}}} {
		for _, n := range c.hops {
			n.writes.watch(marker)
		}
		op := api.NewClient([]string{c.via.addr}, operatorToken, nil)
		work, err := op.Claim(ctx, c.machine, 0, 0)
		if err != nil || len(work) != 1 {
			t.Fatalf("claim %s through %s: %d units, %v", c.machine, c.via.id, len(work), err)
		}
		for _, n := range c.hops {
			ws := n.writes.marked()
			if len(ws) != 1 || !bytes.HasSuffix(ws[0], []byte("]\n")) {
				sizes := make([]int, len(ws))
				for i, w := range ws {
					sizes[i] = len(w)
				}
				t.Errorf("%s's answer through %s: %s wrote it in pieces of %v bytes, the first not its end", c.machine, c.via.id, n.id, sizes)
			}
		}
	}
}
