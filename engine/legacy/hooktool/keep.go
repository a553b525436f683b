package hooktool

import (
	"strconv"
	"sync"
)

// A process that makes many calls (fixpoint-sh, whose tools are builtins)
// keeps two things between them. Its connections to the run: a call is
// then one write and one read, not a socket, a connect, an accept and a
// close on both sides. And the answers the run says it may keep
// (Response.Keep): an old hook that reads every remote unit's settings
// twice (once to act, once to report status) asks the run once. Juju's
// own hook context caches relation settings for the hook's duration the
// same way. fixpoint-hook makes one call per process and so keeps nothing
// for long.

// maxKept bounds the bytes of answers kept; past it they start over.
const maxKept = 4 << 20

// keeper holds a process's idle connections and kept answers.
type keeper struct {
	mu   sync.Mutex
	idle map[string][]int // socket path → idle connections
	// answers are kept answers by readKey; gen moves whenever the
	// KeepUntilWrite ones are forgotten, so that a read that raced with
	// a write does not keep an answer from before it.
	answers map[string]*Response
	size    int
	gen     uint64
}

var kept keeper

// readKey names a call: the same tool with the same arguments in the same
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

// answer returns the kept answer of the call named key.
func (k *keeper) answer(key string) (*Response, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	r, ok := k.answers[key]
	return r, ok
}

// generation is the current generation, read before a call is sent.
func (k *keeper) generation() uint64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.gen
}

// keep keeps an answer the run said may be kept, unless a write's answer
// came since gen.
func (k *keeper) keep(key string, gen uint64, r *Response) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if gen != k.gen || r.Keep == KeepNot {
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

// forget drops the answers a write may have changed (KeepUntilWrite).
func (k *keeper) forget() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.gen++
	for key, r := range k.answers {
		if r.Keep != KeepForHook {
			delete(k.answers, key)
			k.size -= len(key) + len(r.Stdout) + len(r.Stderr)
		}
	}
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
