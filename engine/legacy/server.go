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
	s := &server{ln: ln, token: token, sess: sess, conns: map[net.Conn]bool{}}
	s.wg.Add(1)
	go s.accept()
	return s, nil
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
		_ = conn.SetDeadline(time.Now().Add(ioTimeout))
		resp, tool, last := s.next(r)
		if err := enc.Encode(&resp); err != nil {
			s.sess.log.Debug("hook tool response not delivered", "tool", tool, "error", err)
			return
		}
		if last {
			return
		}
	}
}

// next reads one request from r and answers it. last says that nothing
// after it on r is a request: r ended, or the rest of a request too long
// to read is not one.
func (s *server) next(r *bufio.Reader) (resp response, tool string, last bool) {
	line, err := readRequest(r)
	last = err != nil
	if err == io.EOF {
		// The client sent its last request without a newline.
		err = nil
	}
	resp, tool = s.answer(line, err)
	return resp, tool, last
}

// readRequest reads one request line of at most maxRequest bytes. A
// longer one is read no further: it returns what it read and an error.
func readRequest(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxRequest {
			return line[:maxRequest], fmt.Errorf("request longer than %d bytes", maxRequest)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return line, err
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
	s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}
