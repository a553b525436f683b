package raftstore

import "context"

// WaitIndex blocks until the applied index is greater than after, then
// returns it. When ctx ends first it returns the current index and no
// error: a blocking query that times out is not a failure.
//
// reset is true when the state was replaced wholesale (a snapshot was
// installed or a backup restored) since after was observed, or after is
// ahead of this node's index: objects the watcher tracked may have changed
// or vanished without their indexes saying so, so it must start over from
// a full read. Indexes never go backwards across a replacement, which is
// what lets one comparison tell.
func (s *Store) WaitIndex(ctx context.Context, after uint64) (index uint64, reset bool, err error) {
	for {
		idx, restoredAt, changed := s.fsm.watch()
		if after > 0 && (restoredAt > after || after > idx) {
			return idx, true, nil
		}
		if idx > after {
			return idx, false, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return idx, false, nil
		case <-s.ctx.Done():
			return idx, false, ErrClosed
		}
	}
}
