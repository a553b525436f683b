// Package unitdir lets charmtest give a universe the unit directory that a
// hook process would have as its working directory, so that reconcile
// functions called in-process (many units in one test binary) keep their
// files apart. charmapi's Universe.File reads it.
package unitdir

import "sync"

var dirs sync.Map // universe pointer → directory

// Set binds dir to the universe u points to.
func Set(u any, dir string) { dirs.Store(u, dir) }

// Clear forgets u's directory.
func Clear(u any) { dirs.Delete(u) }

// Get returns the directory bound to u, or "".
func Get(u any) string {
	if d, ok := dirs.Load(u); ok {
		return d.(string)
	}
	return ""
}
