package servers

import (
	"slices"
	"testing"
)

// A restarted server keeps every flag but the addresses it was given
// port 0 in, which become those it got; the original is left alone.
func TestPinnedKeepsFlagsAndPinsAddresses(t *testing.T) {
	args := []string{"server", "--node-id", "n2", "--raft-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--join", "http://127.0.0.1:7070"}
	got := pinned(args, "127.0.0.1:4001", "127.0.0.1:4002")
	want := []string{"server", "--node-id", "n2", "--raft-addr", "127.0.0.1:4001", "--http-addr", "127.0.0.1:4002", "--join", "http://127.0.0.1:7070"}
	if !slices.Equal(got, want) {
		t.Fatalf("pinned = %q, want %q", got, want)
	}
	if args[4] != "127.0.0.1:0" || args[6] != "127.0.0.1:0" {
		t.Fatalf("pinned changed its argument: %q", args)
	}
}
