package model

// Memo returns what a reader of the state keeps under key, made by make
// the first time it is asked for. A memo lives as long as the state's
// lookups: a decoded or cloned state starts without any. It lets the
// engine keep what it derives from the state (each relation member's
// settings as universes show them) across the many universes that show
// the same thing, instead of deriving it again for each.
//
// The state's readers share it under the store's read lock, several at a
// time (a hand-out builds universes on every processor), so Memo is safe
// for concurrent use and so must be what build returns; and since the
// state changes under it, a memo must check what it kept against the
// state it is used with. Two first callers may both call build; one
// value wins and both get it.
func (s *State) Memo(key any, build func() any) any {
	ix := s.lookups()
	if v, ok := ix.memos.Load(key); ok {
		return v
	}
	v, _ := ix.memos.LoadOrStore(key, build())
	return v
}
