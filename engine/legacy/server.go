package legacy

import (
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
	for {
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
		}()
	}
}

// serve answers one request on conn.
func (s *server) serve(conn net.Conn) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(ioTimeout))
	resp, tool := s.answer(conn)
	if err := json.NewEncoder(conn).Encode(&resp); err != nil {
		s.sess.log.Debug("hook tool response not delivered", "tool", tool, "error", err)
	}
}

// answer reads one request from r, a hook's and so untrusted, and runs it
// if it carries the run's token. It returns the response and the tool
// named.
func (s *server) answer(r io.Reader) (response, string) {
	var req request
	if err := json.NewDecoder(io.LimitReader(r, maxRequest)).Decode(&req); err != nil {
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
