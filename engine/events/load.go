package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/fixpoint/fixpoint/charmapi"
)

// ReadUniverse reads a universe JSON file (as `fixpoint debug universe`
// prints it). Errors name the file and, for bad JSON, the line and column.
func ReadUniverse(path string) (*charmapi.Universe, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read universe: %w", err)
	}
	u, err := ParseUniverse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return u, nil
}

// ParseUniverse decodes one universe from JSON; errors carry the line and
// column of the offending byte.
func ParseUniverse(data []byte) (*charmapi.Universe, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("empty file; want a universe JSON object")
	}
	var u charmapi.Universe
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&u); err != nil {
		return nil, jsonError(data, err)
	}
	if dec.More() {
		off := dec.InputOffset()
		line, col := position(data, off)
		return nil, fmt.Errorf("%d:%d: unexpected data after the universe object", line, col)
	}
	if u.API != "" && u.API != charmapi.API {
		return nil, fmt.Errorf("api is %q; this fixpoint reads %q", u.API, charmapi.API)
	}
	if u.Unit == "" {
		return nil, errors.New(`no "unit": not a universe`)
	}
	return &u, nil
}

// jsonError adds a line:col position to a decoding error when it has one.
func jsonError(data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		// Offset counts the offending byte itself.
		line, col := position(data, max(syn.Offset-1, 0))
		return fmt.Errorf("%d:%d: invalid JSON: %w", line, col, err)
	case errors.As(err, &typ):
		// Offset is just past the offending value.
		line, col := position(data, typ.Offset)
		return fmt.Errorf("%d:%d: field %q: want %s, got JSON %s", line, col, typ.Field, typ.Type, typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		line, col := position(data, int64(len(data)))
		return fmt.Errorf("%d:%d: invalid JSON: unexpected end of file", line, col)
	}
	return fmt.Errorf("invalid JSON: %w", err)
}

// position turns a byte offset into a 1-based line and column.
func position(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	line, col = 1, 1
	for _, b := range data[:off] {
		if b == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}
