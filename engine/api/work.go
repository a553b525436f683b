package api

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"

	"github.com/fixpoint/fixpoint/engine"
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

// writeWork writes a batch of work as a JSON array, one unit at a time:
// universes of 2,000 members are ~200 KB of JSON each, and encoding the
// whole batch at once (indented, as writeJSON does) held it two or three
// times over. Each unit is encoded by appendWork, into one buffer reused
// across the batch.
func writeWork(w http.ResponseWriter, work []engine.Work) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 64<<10)
	_ = bw.WriteByte('[')
	var buf []byte
	for i := range work {
		if i > 0 {
			_ = bw.WriteByte(',')
		}
		var err error
		if buf, err = appendWork(buf[:0], &work[i]); err != nil {
			// The status is out already: a cut-off array is what the
			// agent sees, and it claims again.
			return
		}
		if _, err := bw.Write(buf); err != nil {
			return
		}
	}
	_, _ = bw.WriteString("]\n")
	_ = bw.Flush()
}
