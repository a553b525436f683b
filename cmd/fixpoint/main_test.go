package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestMain builds the binary the end-to-end tests run once, into a temp
// dir removed afterwards that also holds the TMPDIR of every process the
// tests start, and points the user cache at a temp dir so that
// charm archives packed by the tests do not pile up in ~/.cache. The Go
// build cache stays where it was: the tests build charm hooks with go build,
// and a cold cache would rebuild the standard library for every charm.
func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	if os.Getenv("GOCACHE") == "" {
		if out, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
			os.Setenv("GOCACHE", strings.TrimSpace(string(out)))
		}
	}
	tmp, err := os.MkdirTemp("", "fixpoint-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	// Each test's processes get a TMPDIR of their own in here (procTmp).
	tmpRoot = tmp
	os.Setenv("XDG_CACHE_HOME", filepath.Join(tmp, "cache"))
	// Saved contexts (fixpoint login) are the tests' own, never the
	// user's; and no environment the user exported picks a context or CA.
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(tmp, "config"))
	os.Unsetenv("FIXPOINT_CONTEXT")
	os.Unsetenv("FIXPOINT_CA")
	binPath = filepath.Join(tmp, "fixpoint")
	// fixpoint-sh beside the binary, as `go install ./cmd/...` puts it:
	// old charms' sh hooks run in it without each up building it first.
	if out, err := exec.Command("go", "build", "-o", tmp+"/", ".", "../fixpoint-sh").CombinedOutput(); err != nil {
		binErr = fmt.Errorf("go build: %v\n%s", err, out)
	}
	// The end-to-end tests mostly wait on the processes they start, so
	// more of them run at once than there are cores; -parallel, when
	// given, wins.
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(max(4, runtime.GOMAXPROCS(0))))
	}
	return m.Run()
}
