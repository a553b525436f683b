package legacy

import (
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// TestSocketBoundsItsConnections: connections wait between requests
// without a deadline, so the run serves at most maxConns at once; more
// wait their turn and are served as others close, none refused.
func TestSocketBoundsItsConnections(t *testing.T) {
	srv, path := serveInstall(t, "secret")
	const clients = maxConns + 30
	var wg sync.WaitGroup
	var mu sync.Mutex
	most, answered := 0, 0
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.Dial("unix", path)
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			if err := json.NewEncoder(conn).Encode(&request{Token: "secret", Context: "ctx", Tool: "is-leader"}); err != nil {
				t.Error(err)
				return
			}
			var r response
			if err := json.NewDecoder(conn).Decode(&r); err != nil {
				t.Error(err)
				return
			}
			srv.mu.Lock()
			open := len(srv.conns)
			srv.mu.Unlock()
			mu.Lock()
			most = max(most, open)
			if r.Code == 0 {
				answered++
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if answered != clients || most > maxConns {
		t.Errorf("%d of %d answered, at most %d connections served at once; want all, at most %d", answered, clients, most, maxConns)
	}
}

// TestSocketBuffersOneLargeRequestAtATime: connections that each start a
// large request and never finish it hold at most one large request's
// bytes between them, and a small request's each; once they close, a
// large request is read and answered as before.
func TestSocketBuffersOneLargeRequestAtATime(t *testing.T) {
	srv, path := serveInstall(t, "secret")
	const conns, size = 20, 2 << 20
	prefix := `{"token":"secret","context":"ctx","tool":"relation-set","args":["-r","db:3","--file","-"],"file":"`
	body := []byte(prefix + strings.Repeat("x", size))
	var open []net.Conn
	for range conns {
		c, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, c)
		go func() { _, _ = c.Write(body) }() // unfinished: no closing quote, no newline
	}
	// One reads its request whole; every other stops at the small bound
	// and waits for it.
	least := int64(len(body) + (conns-1)*(smallRequest-4096))
	rafttest.Eventually(t, time.Minute, "one unfinished request read whole, the others waiting", func() error {
		if srv.buffered.Load() < least || srv.waiting.Load() != conns-1 {
			return fmt.Errorf("%d bytes buffered, %d requests waiting; want %d bytes in all and %d waiting", srv.buffered.Load(), srv.waiting.Load(), least, conns-1)
		}
		return nil
	})
	if most := int64(len(body) + (conns-1)*smallRequest); srv.peak.Load() > most {
		t.Errorf("%d unfinished requests of %d bytes buffered %d bytes; want at most %d", conns, len(body), srv.peak.Load(), most)
	}
	for _, c := range open {
		c.Close()
	}
	rafttest.Eventually(t, time.Minute, "nothing buffered once the connections closed", func() error {
		if n := srv.buffered.Load(); n != 0 {
			return fmt.Errorf("%d bytes still buffered", n)
		}
		return nil
	})
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	file := "k: " + strings.Repeat("v", size) + "\n"
	if err := json.NewEncoder(c).Encode(&request{Token: "secret", Context: "ctx", Tool: "relation-set", Args: []string{"-r", "db:3", "--file", "-"}, File: &file}); err != nil {
		t.Fatal(err)
	}
	var r response
	if err := json.NewDecoder(c).Decode(&r); err != nil || r.Code != 0 {
		t.Fatalf("a large request after the others closed: %+v, %v", r, err)
	}
}
