package main

import (
	"net"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// The bootstrap node restarted while its cluster has no quorum (its one
// peer is down) does not exit: it serves, its health answer says it
// waits for its log to be replayed and retries, past the time a write
// waits for a leader before it gives up; once the peer is back it finds
// its credentials in the replayed log and waits no more.
func TestTheBootstrapNodeWaitsForASlowCluster(t *testing.T) {
	t.Parallel()
	addrs := map[int][2]string{}
	c := newCluster(t)
	// Each node on the same addresses across restarts, so that the
	// peer's come back where the configuration has them.
	c.listen = func(i int) (string, string) {
		if _, ok := addrs[i]; !ok {
			addrs[i] = [2]string{freeAddr(t), freeAddr(t)}
		}
		return addrs[i][0], addrs[i][1]
	}
	c.start(2, false)
	c.sigkill(1)
	c.sigkill(0)

	c.restart(0, "--bootstrap")
	attempt := regexp.MustCompile(`attempt (\d+)`)
	rafttest.Eventually(t, 2*time.Minute, "n1 serving, saying it waits and retries", func() error {
		if c.procs[0].exited() {
			t.Fatalf("n1 exited while its cluster had no quorum:\n%s", c.procs[0].out)
		}
		var h api.Health
		if _, err := c.get(c.addrs[0], "/healthz", &h); err != nil {
			return err
		}
		m := attempt.FindStringSubmatch(h.Waiting)
		if m == nil {
			return holds(false, "waiting: "+h.Waiting)
		}
		// The third attempt starts after the first two each waited
		// for a leader until the store gave up on it.
		n, _ := strconv.Atoi(m[1])
		return holds(n >= 3, "waiting: "+h.Waiting)
	})
	resp, body, err := c.do(http.MethodGet, c.addrs[0], "/readyz", nil)
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("readyz of a node waiting for its cluster: %v %v %s; want 503", resp, err, body)
	}

	c.restart(1, "--join", c.addrs[0])
	rafttest.Eventually(t, 2*time.Minute, "n1 done waiting once its peer is back", func() error {
		if c.procs[0].exited() {
			t.Fatalf("n1 exited:\n%s", c.procs[0].out)
		}
		var h api.Health
		if _, err := c.get(c.addrs[0], "/readyz", &h); err != nil {
			return err
		}
		return holds(h.Waiting == "", "waiting: "+h.Waiting)
	})
	if st := c.state(c.addrs[0], false); st.Auth == nil || st.Auth.Operator != api.HashToken(c.token) {
		t.Fatalf("credentials after the restart: %+v; want the bootstrap node's", st.Auth)
	}
}

// freeAddr is a 127.0.0.1 address whose port the OS picked free.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
