package forward

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/model/fault"
)

// A body over the cap a follower's API puts on it is the caller's error:
// 413, as the leader would answer, not a 502 that says to try again,
// whether the request is streamed to the leader or batched.
func TestOversizedBodyThroughAFollowerIs413(t *testing.T) {
	stub := &leaderStub{}
	leader := httptest.NewServer(stub)
	t.Cleanup(leader.Close)
	p := newTestProxy(t)
	const limit = 1024
	f := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, limit) // as the API caps every body
		p.Serve(w, r, leader.URL)
	}))
	t.Cleanup(f.Close)
	body := strings.Repeat("x", 4*limit)
	for name, length := range map[string]int64{"streamed (chunked)": -1, "batched": int64(len(body))} {
		req, err := http.NewRequest(http.MethodPost, f.URL+"/v1/agent/register", io.NopCloser(strings.NewReader(body)))
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = length
		req.Header.Set("Authorization", "Bearer a")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if e := fault.Decode(resp.StatusCode, b); resp.StatusCode != http.StatusRequestEntityTooLarge || !errors.Is(e, fault.ErrTooLarge) {
			t.Errorf("%s: %d %s; want 413 too_large", name, resp.StatusCode, b)
		}
	}
}
