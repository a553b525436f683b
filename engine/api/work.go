package api

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"github.com/fixpoint/fixpoint/engine/wire"
)

// MaxWork is the most units one work request hands out. An agent asks for
// its free hook slots; the cap keeps a request without max, or with a
// huge one, from claiming (and building the universes of) every stale
// unit of its machine at once.
const MaxWork = 256

// workMax reads the max= of a work request: empty or 0 means MaxWork.
func workMax(s string) (int, error) {
	if s == "" {
		return MaxWork, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("max=%q is not a count of units (0 to %d)", s, MaxWork)
	}
	if n == 0 || n > MaxWork {
		return MaxWork, nil
	}
	return n, nil
}

// writeWork writes a batch of work as a JSON array, one unit at a time,
// into a pooled buffer: an answer that fits in it (a change's usual
// answer, one unit) goes out in one write with its Content-Length; a
// larger one is streamed whenever the buffer holds workFlush bytes, since
// a universe grows with its relations' members and a whole batch at once
// would be held several times over. The buffer is pooled, not allocated
// per answer, so that the answers of one change do not set off
// collections in the middle of the next hand-outs.
func writeWork(w http.ResponseWriter, work []wire.Work) {
	bp := workBufs.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= workKeep {
			workBufs.Put(bp)
		}
	}()
	buf := append((*bp)[:0], '[')
	streaming := false
	for i := range work {
		if i > 0 {
			buf = append(buf, ',')
		}
		var err error
		if buf, err = appendWork(buf, &work[i]); err != nil {
			if streaming {
				// The status is out already: a cut-off array is
				// what the agent sees, and it claims again.
				return
			}
			writeError(w, http.StatusInternalServerError, "encode the work of %s: %v", work[i].Unit, err)
			return
		}
		if len(buf) >= workFlush {
			if !streaming {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusOK)
				streaming = true
			}
			if _, err := w.Write(buf); err != nil {
				*bp = buf
				return
			}
			buf = buf[:0]
		}
	}
	buf = append(buf, "]\n"...)
	*bp = buf
	if !streaming {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(buf)))
		w.WriteHeader(http.StatusOK)
	}
	_, _ = w.Write(buf)
}

// workFlush is how much of an answer writeWork holds before it streams;
// workKeep is the largest buffer it keeps for the next answer.
const (
	workFlush = 64 << 10
	workKeep  = 256 << 10
)

var workBufs = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}
