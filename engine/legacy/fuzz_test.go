package legacy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// FuzzToolRequest feeds the tool server what a hook may send: anything.
// Whatever arrives, the server answers with an exit code a tool may have,
// and a request without the run's token runs nothing.
func FuzzToolRequest(f *testing.F) {
	for _, seed := range []string{
		`{"token":"secret","context":"ctx","tool":"relation-get","args":["-r","db:3","-","db/1"]}`,
		`{"token":"secret","context":"ctx","tool":"relation-set","args":["-r","db:3","a=b"],"file":"c: d\n"}`,
		`{"token":"secret","context":"ctx","tool":"network-get","args":["db","--format","json"]}`,
		`{"token":"secret","context":"ctx","tool":"open-port","args":["80/tcp"]}`,
		`{"token":"secret","context":"other","tool":"is-leader"}`,
		`{"token":"guess","context":"ctx","tool":"relation-set","args":["x=y"]}`,
		`{"token":"secret","tool":"status-set","args":["--application","active","\u001b[31m"]}`,
		`{"token":`, `[]`, `null`, "",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := newSession(testUniverse(), nil, nil, hclog.NewNullLogger())
		if err != nil {
			t.Fatal(err)
		}
		s.begin("ctx", ev("db-relation-changed", "db:3", "db/1", "db", ""))
		srv := newServer("secret", s)
		resp, _, _ := srv.next(bufio.NewReader(bytes.NewReader(data)), time.Now().Add(ioTimeout))
		if srv.buffered.Load() != 0 || len(srv.large) != 0 {
			t.Fatalf("%d bytes, %d large slots still held after %q", srv.buffered.Load(), len(srv.large), data)
		}
		if resp.Code < 0 || resp.Code > exitUsage {
			t.Fatalf("exit code %d for %q", resp.Code, data)
		}
		var req request
		carries := json.NewDecoder(bytes.NewReader(data)).Decode(&req) == nil && req.Token == "secret"
		if !carries && srv.calls.Load() != 0 {
			t.Fatalf("a request without the token ran: %q", data)
		}
	})
}
