package release

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"testing"
)

// TestBuildOfAbsentRevisionSaysNoHistory: a revision the history does not
// hold is ErrNoHistory, which callers skip on, not a build failure.
func TestBuildOfAbsentRevisionSaysNoHistory(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	repo := filepath.Join(filepath.Dir(file), "..", "..")
	_, err := Build(context.Background(), repo, "no-such-release-tag", t.TempDir(), "./cmd/fixpoint")
	if !errors.Is(err, ErrNoHistory) {
		t.Fatalf("build of an absent revision: %v, want ErrNoHistory", err)
	}
}
