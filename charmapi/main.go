package charmapi

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Main runs fn as a reconcile hook: it reads the universe from
// $FIXPOINT_UNIVERSE (or stdin), calls fn, and prints the result as JSON on
// stdout. An error from fn is printed on stderr and the process exits 1.
func Main(fn func(*Universe) (*Result, error)) {
	if err := run(fn, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(fn func(*Universe) (*Result, error), stdin io.Reader, stdout io.Writer) error {
	u, err := readUniverse(stdin)
	if err != nil {
		return err
	}
	res, err := fn(u)
	if err != nil {
		return err
	}
	if res == nil {
		res = &Result{}
	}
	return json.NewEncoder(stdout).Encode(res)
}

// readUniverse reads the universe from $FIXPOINT_UNIVERSE (a file), or
// stdin.
func readUniverse(stdin io.Reader) (*Universe, error) {
	var data []byte
	var err error
	if path := os.Getenv("FIXPOINT_UNIVERSE"); path != "" {
		data, err = os.ReadFile(path)
	} else {
		data, err = io.ReadAll(stdin)
	}
	if err != nil {
		return nil, fmt.Errorf("read universe: %w", err)
	}
	var u Universe
	if err := json.Unmarshal(data, &u); err != nil {
		return nil, fmt.Errorf("decode universe: %w", err)
	}
	if u.API != API {
		return nil, fmt.Errorf("universe api is %q; this charm speaks %q", u.API, API)
	}
	return &u, nil
}
