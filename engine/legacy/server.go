package legacy

import (
	"bufio"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// ioTimeout bounds reading a request and writing its response; a tool
// call is a few hundred bytes either way.
const ioTimeout = 30 * time.Second

// maxConns bounds the connections one run serves at once. Connections
// wait between requests without a deadline (serve), so a hook could
// otherwise hold the agent's memory with idle ones; past the bound the
// next connection waits in the listen queue until one closes. A hook
// runs its tools one at a time, or a few at once in the background.
const maxConns = 128

// smallRequest is what one connection reads of a request on its own: a
// tool call's arguments are a few hundred bytes. A longer request
// (relation-set --file) is read holding the run's one large-request slot,
// so that the run buffers at most one request of up to maxRequest, and
// maxConns small ones, however many connections a hook opens and leaves
// unfinished.
const smallRequest = 64 << 10

// server serves the hook tools of one Run over a unix socket. A request
// must carry the run's token: the socket sits in a private directory, and
// the token keeps any other process of the same user that finds it out.
type server struct {
	ln    net.Listener
	token string
	sess  *session

	mu    sync.Mutex
	conns map[net.Conn]bool
	wg    sync.WaitGroup
	done  chan struct{} // closed by close

	// large is the slot a request longer than smallRequest is read in;
	// waiting counts the requests waiting for it.
	large   chan struct{}
	waiting atomic.Int64
	// buffered is the bytes of requests being read or answered now, and
	// peak the most there were at once.
	buffered, peak atomic.Int64

	// calls counts the requests that carried the token: Stats.ToolCalls.
	calls atomic.Int64
}

// listen starts serving sess on a new unix socket at path.
func listen(path, token string, sess *session) (*server, error) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("hook tool socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("hook tool socket: %w", err)
	}
	s := newServer(token, sess)
	s.ln = ln
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// newServer is a server of sess, not yet listening.
func newServer(token string, sess *session) *server {
	return &server{token: token, sess: sess, conns: map[net.Conn]bool{},
		done: make(chan struct{}), large: make(chan struct{}, 1)}
}

func (s *server) accept() {
	defer s.wg.Done()
	slots := make(chan struct{}, maxConns)
	for {
		slots <- struct{}{}
		conn, err := s.ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				s.sess.log.Warn("hook tool socket stopped accepting", "error", err)
			}
			return
		}
		s.mu.Lock()
		s.conns[conn] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serve(conn)
			s.mu.Lock()
			delete(s.conns, conn)
			s.mu.Unlock()
			<-slots
		}()
	}
}

// serve answers the requests on conn, one line each, until the client
// closes it or the run ends (close). A connection waits between requests
// without a deadline: fixpoint-sh keeps one for the whole hook, and the
// run's end closes it whatever the hook does. A request, once it began,
// must arrive whole within ioTimeout, and its answer be taken as fast.
func (s *server) serve(conn net.Conn) {
	defer conn.Close()
	r := bufio.NewReaderSize(conn, 4096)
	enc := json.NewEncoder(conn)
	for {
		_ = conn.SetDeadline(time.Time{})
		if _, err := r.Peek(1); err != nil {
			return
		}
		deadline := time.Now().Add(ioTimeout)
		_ = conn.SetDeadline(deadline)
		resp, tool, last := s.next(r, deadline)
		if err := enc.Encode(&resp); err != nil {
			s.sess.log.Debug("hook tool response not delivered", "tool", tool, "error", err)
			return
		}
		if last {
			return
		}
	}
}

// next reads one request from r and answers it; the request must be read
// by deadline. last says that nothing after it on r is a request: r
// ended, or the rest of a request that could not be read is not one.
func (s *server) next(r *bufio.Reader, deadline time.Time) (resp response, tool string, last bool) {
	line, large, err := s.readRequest(r, deadline)
	defer s.release(len(line), large)
	last = err != nil
	if err == io.EOF {
		// The client sent its last request without a newline.
		err = nil
	}
	resp, tool = s.answer(line, err)
	return resp, tool, last
}

// readRequest reads one request line of at most maxRequest bytes; past
// smallRequest it reads on only holding the large-request slot (large).
// A request it cannot read whole is read no further: it returns what it
// read and an error. The caller releases what it returns.
func (s *server) readRequest(r *bufio.Reader, deadline time.Time) (line []byte, large bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if n := len(line) + len(chunk); n > smallRequest && !large {
			if err := s.takeLarge(deadline); err != nil {
				return line, false, err
			}
			large = true
		}
		s.hold(len(chunk))
		line = append(line, chunk...)
		if len(line) > maxRequest {
			return line, large, fmt.Errorf("request longer than %d bytes", maxRequest)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return line, large, err
	}
}

// takeLarge waits for the large-request slot until deadline.
func (s *server) takeLarge(deadline time.Time) error {
	wait := time.NewTimer(time.Until(deadline))
	defer wait.Stop()
	s.waiting.Add(1)
	defer s.waiting.Add(-1)
	select {
	case s.large <- struct{}{}:
		return nil
	case <-s.done:
		return errors.New("the hook run ended")
	case <-wait.C:
		return fmt.Errorf("a request over %d bytes waited %v for another to finish", smallRequest, ioTimeout)
	}
}

// hold counts n more bytes buffered.
func (s *server) hold(n int) {
	now := s.buffered.Add(int64(n))
	for {
		p := s.peak.Load()
		if now <= p || s.peak.CompareAndSwap(p, now) {
			return
		}
	}
}

// release gives back a request's n bytes and, if it held it, the
// large-request slot.
func (s *server) release(n int, large bool) {
	s.buffered.Add(-int64(n))
	if large {
		<-s.large
	}
}

// answer decodes one request, a hook's and so untrusted, and runs it if
// it carries the run's token. readErr is why the request could not be
// read whole, if it could not. It returns the response and the tool
// named.
func (s *server) answer(line []byte, readErr error) (response, string) {
	if readErr != nil {
		return failure(exitFailed, fmt.Errorf("bad hook tool request: %v", readErr)), ""
	}
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		return failure(exitFailed, fmt.Errorf("bad hook tool request: %v", err)), ""
	}
	if subtle.ConstantTimeCompare([]byte(req.Token), []byte(s.token)) != 1 {
		return failure(exitFailed, errors.New("hook tool request refused: wrong token")), req.Tool
	}
	s.calls.Add(1)
	return s.sess.call(&req), req.Tool
}

// close stops accepting, drops connections in flight and waits for their
// goroutines.
func (s *server) close() {
	close(s.done)
	s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}
