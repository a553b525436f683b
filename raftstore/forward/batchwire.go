package forward

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/fixpoint/fixpoint/model"
)

// BatchPath is where a node sends the leader several callers' requests in
// one: POST, the node's own credentials, a body of encoded members.
const BatchPath = "/v1/forward/batch"

// batchType is the Content-Type of a batch and of its answer.
const batchType = "application/x-fixpoint-batch"

// Bounds of a batch, checked on decoding before anything is allocated
// for it. A batch is one request to the leader's API, so the whole of it
// obeys the API's body cap.
const (
	maxBatchBytes  = model.MaxCommandBytes
	maxMembers     = 256
	maxMethod      = 16
	maxTarget      = 8 << 10
	maxHeaders     = 64
	maxHeaderName  = 256
	maxHeaderValue = 8 << 10
	// maxAnswerBytes bounds the answer to a whole batch; one member's
	// answer larger than maxMemberAnswer is replaced by an error.
	maxAnswerBytes  = 16 << 20
	maxMemberAnswer = 1 << 20
)

// wireRequest is one caller's request inside a batch.
type wireRequest struct {
	method string
	target string // path and query, as in the request line
	header http.Header
	body   []byte
}

// wireAnswer is the leader's answer to one member.
type wireAnswer struct {
	status int
	header http.Header
	body   []byte
}

// errBatch is a batch or batch answer that is not well formed.
var errBatch = errors.New("malformed batch")

// appendBatch encodes reqs: a count, then per member its method, target,
// headers and body, every string and body preceded by its length.
func appendBatch(b []byte, reqs []wireRequest) []byte {
	b = binary.AppendUvarint(b, uint64(len(reqs)))
	for _, r := range reqs {
		b = appendString(b, r.method)
		b = appendString(b, r.target)
		b = appendHeader(b, r.header)
		b = appendString(b, string(r.body))
	}
	return b
}

// appendAnswers encodes as: a count, then per member its status, headers
// and body.
func appendAnswers(b []byte, as []wireAnswer) []byte {
	b = binary.AppendUvarint(b, uint64(len(as)))
	for _, a := range as {
		b = binary.AppendUvarint(b, uint64(a.status))
		b = appendHeader(b, a.header)
		b = appendString(b, string(a.body))
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendHeader(b []byte, h http.Header) []byte {
	n := 0
	for _, vs := range h {
		n += len(vs)
	}
	b = binary.AppendUvarint(b, uint64(n))
	for k, vs := range h {
		for _, v := range vs {
			b = appendString(b, k)
			b = appendString(b, v)
		}
	}
	return b
}

// decodeBatch decodes a batch, refusing one over any bound or with a
// member that is not a plausible request: a method that is not a token,
// a target that is not an absolute path.
func decodeBatch(data []byte) ([]wireRequest, error) {
	if len(data) > maxBatchBytes {
		return nil, fmt.Errorf("%w: %d bytes, over the %d-byte limit", errBatch, len(data), maxBatchBytes)
	}
	d := &decoder{data: data}
	n := d.count(maxMembers, "members")
	out := make([]wireRequest, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		r := wireRequest{method: d.string(maxMethod, "method"), target: d.string(maxTarget, "target")}
		r.header = d.header()
		r.body = d.bytes(maxBatchBytes, "body")
		if d.err == nil {
			d.err = checkMember(r)
		}
		if d.err != nil {
			d.err = fmt.Errorf("member %d: %w", i, d.err)
		}
		out = append(out, r)
	}
	if err := d.end(); err != nil {
		return nil, err
	}
	return out, nil
}

// checkMember reports what makes r no request the API could serve.
func checkMember(r wireRequest) error {
	if r.method == "" || strings.IndexFunc(r.method, func(c rune) bool { return c < 'A' || c > 'Z' }) >= 0 {
		return fmt.Errorf("%w: method %q", errBatch, r.method)
	}
	if !strings.HasPrefix(r.target, "/") || strings.HasPrefix(r.target, "//") {
		return fmt.Errorf("%w: target %q is not an absolute path", errBatch, model.Quote(r.target, 64))
	}
	return nil
}

// fits reports whether r is within every bound decodeBatch checks, so
// that one odd caller (a long header, many headers) can not make the
// leader refuse the batch of everyone else: such a request is sent alone.
func fits(r wireRequest) bool {
	if len(r.method) > maxMethod || len(r.target) > maxTarget || checkMember(r) != nil {
		return false
	}
	n := 0
	for k, vs := range r.header {
		n += len(vs)
		for _, v := range vs {
			if len(k) > maxHeaderName || len(v) > maxHeaderValue || badHeader(k, v) {
				return false
			}
		}
	}
	return n <= maxHeaders
}

// decodeAnswers decodes the answer to a batch of want members.
func decodeAnswers(data []byte, want int) ([]wireAnswer, error) {
	if len(data) > maxAnswerBytes {
		return nil, fmt.Errorf("%w: answer of %d bytes, over the %d-byte limit", errBatch, len(data), maxAnswerBytes)
	}
	d := &decoder{data: data}
	n := d.count(maxMembers, "answers")
	if d.err == nil && n != want {
		return nil, fmt.Errorf("%w: %d answers to %d requests", errBatch, n, want)
	}
	out := make([]wireAnswer, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		a := wireAnswer{status: d.count(999, "status")}
		a.header = d.header()
		a.body = d.bytes(maxMemberAnswer, "answer body")
		if d.err == nil && a.status < 100 {
			d.err = fmt.Errorf("%w: answer %d has status %d", errBatch, i, a.status)
		}
		out = append(out, a)
	}
	if err := d.end(); err != nil {
		return nil, err
	}
	return out, nil
}

// decoder reads the encoding; its first error sticks and every later read
// returns a zero value.
type decoder struct {
	data []byte
	err  error
}

func (d *decoder) uvarint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.data)
	if n <= 0 {
		d.err = fmt.Errorf("%w: bad length of %s", errBatch, what)
		return 0
	}
	d.data = d.data[n:]
	return v
}

// count reads a number no larger than limit.
func (d *decoder) count(limit int, what string) int {
	v := d.uvarint(what)
	if d.err == nil && v > uint64(limit) {
		d.err = fmt.Errorf("%w: %d %s, over the limit of %d", errBatch, v, what, limit)
		return 0
	}
	return int(v)
}

// bytes reads a length-prefixed byte string of at most limit bytes; it
// aliases the input.
func (d *decoder) bytes(limit int, what string) []byte {
	n := d.count(limit, what+" bytes")
	if d.err != nil {
		return nil
	}
	if n > len(d.data) {
		d.err = fmt.Errorf("%w: %s cut short", errBatch, what)
		return nil
	}
	b := d.data[:n:n]
	d.data = d.data[n:]
	return b
}

func (d *decoder) string(limit int, what string) string { return string(d.bytes(limit, what)) }

// header reads a member's headers; names are canonicalized, as net/http
// does for a request it reads.
func (d *decoder) header() http.Header {
	n := d.count(maxHeaders, "headers")
	h := make(http.Header, n)
	for i := 0; i < n && d.err == nil; i++ {
		k := d.string(maxHeaderName, "header name")
		v := d.string(maxHeaderValue, "header value")
		if d.err == nil && badHeader(k, v) {
			d.err = fmt.Errorf("%w: header %q", errBatch, model.Quote(k, 64))
		}
		h.Add(k, v)
	}
	return h
}

// badHeader reports whether k: v is no header a request could carry.
func badHeader(k, v string) bool {
	return k == "" || strings.ContainsAny(k, " \t\r\n:") || strings.ContainsAny(v, "\r\n\x00")
}

// end reports the first error, or bytes left over.
func (d *decoder) end() error {
	if d.err == nil && len(d.data) > 0 {
		d.err = fmt.Errorf("%w: %d bytes after the last member", errBatch, len(d.data))
	}
	return d.err
}
