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
//
// Other processes of the hook (a command fixpoint-sh runs, which may call
// the tools itself) write behind this process's back. An answer kept until
// a write is therefore given only while it carries the run's latest write
// generation (Response.Gen) as this process last heard it, and only if no
// other process of the hook ran since that was heard: after one did, the
// next such read asks the run, and its answer either confirms every kept
// answer (the generation stood still) or retires them.

// maxKept bounds the bytes of answers kept; past it they start over.
const maxKept = 4 << 20

// keeper holds a process's idle connections and kept answers.
type keeper struct {
	mu   sync.Mutex
	idle map[string][]int // socket path → idle connections
	// answers are kept answers by readKey.
	answers map[string]keptAnswer
	size    int
	// gens is the latest write generation each run (by socket path)
	// answered with.
	gens map[string]uint64
	// others counts the other processes of the hook running now
	// (Outside); epoch moves whenever one starts or ends. checked is the
	// epoch of the last answer no other process could have overtaken:
	// answers kept until a write are given only while checked is the
	// epoch and others is 0.
	others  int
	epoch   uint64
	checked uint64
}

// keptAnswer is an answer and the run it came from.
type keptAnswer struct {
	socket string
	resp   *Response
}

var kept keeper

// Outside runs fn, which runs another process of the hook (one that may
// call the tools itself, writes included) and waits for it. While it runs,
// and after it until an answer from the run shows which writes it made,
// answers kept until a write are asked for again.
func Outside(fn func() error) error { return kept.outside(fn) }

func (k *keeper) outside(fn func() error) error {
	k.mu.Lock()
	k.others++
	k.epoch++
	k.mu.Unlock()
	defer func() {
		k.mu.Lock()
		k.others--
		k.epoch++
		k.mu.Unlock()
	}()
	return fn()
}

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

// answer returns the kept answer of the call named key, if it still
// holds.
func (k *keeper) answer(key string) (*Response, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	a, ok := k.answers[key]
	if !ok {
		return nil, false
	}
	if a.resp.Keep == KeepForHook {
		return a.resp, true
	}
	if k.others > 0 || k.checked != k.epoch || a.resp.Gen != k.gens[a.socket] {
		return nil, false
	}
	return a.resp, true
}

// sending is read before a call is sent: the epoch, and whether this
// process is the hook's only one.
func (k *keeper) sending() (epoch uint64, alone bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.epoch, k.others == 0
}

// heard takes the run's answer r to the call named key, sent at epoch
// (alone: no other process of the hook was running). A generation newer
// than the last retires the answers kept until a write; an answer no
// other process could have overtaken confirms the rest; an answer the
// run says may be kept, and no older than a write already heard, is kept.
func (k *keeper) heard(socket, key string, epoch uint64, alone bool, r *Response) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.gens == nil {
		k.gens = map[string]uint64{}
	}
	if r.Gen > k.gens[socket] {
		k.gens[socket] = r.Gen
		k.drop(func(a keptAnswer) bool { return a.socket == socket && a.resp.Keep != KeepForHook })
	}
	if alone && epoch == k.epoch && k.others == 0 && r.Gen == k.gens[socket] {
		k.checked = epoch
	}
	if r.Keep == KeepNot || r.Gen < k.gens[socket] {
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
		k.answers = map[string]keptAnswer{}
	}
	if old, ok := k.answers[key]; ok {
		k.size -= len(key) + len(old.resp.Stdout) + len(old.resp.Stderr)
	}
	k.answers[key] = keptAnswer{socket: socket, resp: r}
	k.size += n
}

// forget drops the answers a write may have changed (KeepUntilWrite): a
// call that failed on the way may have written.
func (k *keeper) forget() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.drop(func(a keptAnswer) bool { return a.resp.Keep != KeepForHook })
}

// drop deletes the kept answers that match; k.mu is held.
func (k *keeper) drop(match func(keptAnswer) bool) {
	for key, a := range k.answers {
		if match(a) {
			delete(k.answers, key)
			k.size -= len(key) + len(a.resp.Stdout) + len(a.resp.Stderr)
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
