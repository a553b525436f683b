package forward

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"path"
	"strconv"
	"sync"

	"github.com/fixpoint/fixpoint/model/fault"
)

// ServeBatch answers a batch another node sent (POST BatchPath): it runs
// every member through h, the node's whole API handler, as if the caller
// had sent it here itself (its own credentials checked by h, marked as
// forwarded so that h answers or refuses it and never passes it on), all
// members at once, and answers with their answers in order once the last
// is done. The batch itself must come with the sending node's credentials;
// the caller checks them before calling ServeBatch.
//
// Members of one batch come from concurrent callers and land in the same
// few Raft batches, so waiting for the last costs each little; what a
// batch saves is a request, a response and their syscalls per member on
// both nodes.
func ServeBatch(w http.ResponseWriter, r *http.Request, h http.Handler) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBatchBytes))
	if err != nil {
		fault.Write(w, fault.Errorf(fault.KindTooLarge, "read batch: %v", err))
		return
	}
	reqs, err := decodeBatch(data)
	if err != nil {
		fault.Write(w, fault.Errorf(fault.KindBadRequest, "decode batch: %v", err))
		return
	}
	from := r.Header.Get(Header)
	if from == "" {
		from = "unknown"
	}
	answers := make([]wireAnswer, len(reqs))
	var wg sync.WaitGroup
	for i, m := range reqs {
		wg.Add(1)
		memberWorkers.run(func() {
			defer wg.Done()
			answers[i] = serveMember(r, m, from, h)
		})
	}
	wg.Wait()
	out := appendAnswers(make([]byte, 0, 256*len(answers)), answers)
	w.Header().Set("Content-Type", batchType)
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}

// serveMember runs one member through h and records its answer. A handler
// that panics answers this member with an internal error, as net/http
// would end that one request, not the node.
func serveMember(outer *http.Request, m wireRequest, from string, h http.Handler) (a wireAnswer) {
	rec := &recorder{header: http.Header{}}
	defer func() {
		if p := recover(); p != nil {
			a = errorAnswer(fault.Errorf(fault.KindInternal, "%s %s: handler failed: %v", m.method, m.target, p))
		}
	}()
	req, err := http.NewRequestWithContext(outer.Context(), m.method, m.target, bytes.NewReader(m.body))
	if err != nil {
		return errorAnswer(fault.Errorf(fault.KindBadRequest, "%s %s: %v", m.method, m.target, err))
	}
	// The path as a router sees it: escapes decoded (%62atch is batch),
	// dot segments and repeated slashes gone.
	if path.Clean(req.URL.Path) == BatchPath {
		return errorAnswer(fault.Errorf(fault.KindBadRequest, "a batch does not hold batches"))
	}
	req.RequestURI = m.target
	req.Host = outer.Host
	req.RemoteAddr = outer.RemoteAddr
	req.Header = m.header
	req.Header.Set(Header, from)
	req.Proto, req.ProtoMajor, req.ProtoMinor = outer.Proto, outer.ProtoMajor, outer.ProtoMinor
	h.ServeHTTP(rec, req)
	if rec.over {
		return errorAnswer(fault.Errorf(fault.KindInternal, "%s %s: the answer is over the %d bytes a batch relays", m.method, m.target, maxMemberAnswer))
	}
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return wireAnswer{status: rec.status, header: rec.header, body: rec.body.Bytes()}
}

// errorAnswer is e as the envelope Write would answer with.
func errorAnswer(e *fault.Error) wireAnswer {
	rec := &recorder{header: http.Header{}}
	fault.Write(rec, e)
	return wireAnswer{status: rec.status, header: rec.header, body: rec.body.Bytes()}
}

// recorder is the ResponseWriter a member is served with.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
	over   bool
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	if r.body.Len()+len(b) > maxMemberAnswer {
		r.over = true
		return 0, fmt.Errorf("answer over %d bytes", maxMemberAnswer)
	}
	return r.body.Write(b)
}
