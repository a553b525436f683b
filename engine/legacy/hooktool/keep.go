package hooktool

import (
	"strconv"
	"sync"
)

// A process that makes many calls (fixpoint-sh, whose tools are builtins)
// keeps two things between them. Its connections to the run: a call is
// then one write and one read, not a socket, a connect, an accept and a
// close on both sides. And the answers of reads, which within one hook
// change only when the hook calls a tool that is not a read: an old hook
// that reads every remote unit's settings twice (once to act, once to
// report status) asks the run once. Juju's own hook context caches
// relation settings for the hook's duration the same way. fixpoint-hook
// makes one call per process and so keeps nothing for long.

// reads are the tools whose answer, in one hook context, depends only on
// the tools called before it in that context: they change nothing, and
// their answer changes only after a call of a tool not listed here.
// engine/legacy's TestReadToolsChangeNothing holds its tools to that.
var reads = map[string]bool{
	"config-get":         true,
	"goal-state":         true,
	"is-leader":          true,
	"leader-get":         true,
	"network-get":        true,
	"opened-ports":       true,
	"relation-get":       true,
	"relation-ids":       true,
	"relation-list":      true,
	"relation-model-get": true,
	"status-get":         true,
	"unit-get":           true,
}

// IsRead reports whether tool is a read whose answer a caller may keep
// until it calls a tool that is not one.
func IsRead(tool string) bool { return reads[tool] }

// maxKept bounds the bytes of answers kept; past it they start over.
const maxKept = 4 << 20

// keeper holds a process's idle connections and kept answers.
type keeper struct {
	mu   sync.Mutex
	idle map[string][]int // socket path → idle connections
	// answers are the successful answers of reads, by readKey; gen moves
	// on every call of a tool that is not a read, so that a read that
	// raced with it does not keep an answer from before it.
	answers map[string]*Response
	size    int
	gen     uint64
}

var kept keeper

// readKey names a read: the same tool with the same arguments in the same
// hook context of the same run.
func readKey(socket string, req *Request) string {
	b := make([]byte, 0, 128)
	for _, s := range append([]string{socket, req.Context, req.Tool}, req.Args...) {
		b = strconv.AppendInt(b, int64(len(s)), 10)
		b = append(b, ':')
		b = append(b, s...)
	}
	return string(b)
}

// answer returns a kept answer of the read named key.
func (k *keeper) answer(key string) (*Response, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	r, ok := k.answers[key]
	return r, ok
}

// generation is the current generation, read before a read is sent.
func (k *keeper) generation() uint64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.gen
}

// keep keeps a read's answer if no other tool was called since gen.
func (k *keeper) keep(key string, gen uint64, r *Response) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if gen != k.gen || r.Code != 0 {
		return
	}
	n := len(key) + len(r.Stdout) + len(r.Stderr)
	if n > maxKept {
		return
	}
	if k.size+n > maxKept {
		k.answers, k.size = nil, 0
	}
	if k.answers == nil {
		k.answers = map[string]*Response{}
	}
	k.answers[key] = r
	k.size += n
}

// forget drops every kept answer: a tool that is not a read was called
// and may have changed any of them.
func (k *keeper) forget() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.gen++
	k.answers, k.size = nil, 0
}

// conn returns an idle connection to the socket at path, or dials one.
func (k *keeper) conn(path string) (int, error) {
	k.mu.Lock()
	if fds := k.idle[path]; len(fds) > 0 {
		fd := fds[len(fds)-1]
		k.idle[path] = fds[:len(fds)-1]
		k.mu.Unlock()
		return fd, nil
	}
	k.mu.Unlock()
	return dial(path, ioTimeout)
}

// release keeps fd, whose last answer was read whole, for the next call.
func (k *keeper) release(path string, fd int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.idle == nil {
		k.idle = map[string][]int{}
	}
	k.idle[path] = append(k.idle[path], fd)
}
