package hooktool

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// The tool writes its request and reads the response as JSON by hand
// rather than with encoding/json: reflection and that package's
// dependencies cost every call their start-up (see the package comment).
// The server uses encoding/json; TestWireMatchesEncodingJSON holds the two
// to the same bytes' meaning.

// appendRequest appends req as one JSON object, as json.Marshal would
// write its fields (invalid UTF-8 becomes U+FFFD, as there).
func appendRequest(b []byte, req *Request) []byte {
	b = append(b, `{"token":`...)
	b = appendString(b, req.Token)
	b = append(b, `,"context":`...)
	b = appendString(b, req.Context)
	b = append(b, `,"tool":`...)
	b = appendString(b, req.Tool)
	b = append(b, `,"args":`...)
	if req.Args == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, a := range req.Args {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, a)
		}
		b = append(b, ']')
	}
	if req.File != nil {
		b = append(b, `,"file":`...)
		b = appendString(b, *req.File)
	}
	return append(b, '}', '\n')
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// parseResponse reads the server's answer: one JSON object with "code",
// "stdout", "stderr", "keep" and "gen", each optional; other members are
// skipped.
func parseResponse(data []byte) (*Response, error) {
	p := &parser{data: data}
	var resp Response
	p.space()
	if !p.eat('{') {
		return nil, p.fail("not a JSON object")
	}
	p.space()
	if p.eat('}') {
		return &resp, p.end()
	}
	for {
		p.space()
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		p.space()
		if !p.eat(':') {
			return nil, p.fail("no ':' after a member name")
		}
		p.space()
		switch key {
		case "code":
			if resp.Code, err = p.int(); err != nil {
				return nil, err
			}
		case "stdout":
			if resp.Stdout, err = p.str(); err != nil {
				return nil, err
			}
		case "stderr":
			if resp.Stderr, err = p.str(); err != nil {
				return nil, err
			}
		case "keep":
			if resp.Keep, err = p.int(); err != nil {
				return nil, err
			}
		case "gen":
			if resp.Gen, err = p.uint(); err != nil {
				return nil, err
			}
		default:
			if err := p.skip(); err != nil {
				return nil, err
			}
		}
		p.space()
		if p.eat('}') {
			return &resp, p.end()
		}
		if !p.eat(',') {
			return nil, p.fail("no ',' or '}' after a member")
		}
	}
}

// parser reads JSON from data at pos.
type parser struct {
	data []byte
	pos  int
}

func (p *parser) fail(msg string) error {
	return errString("bad response at byte " + strconv.Itoa(p.pos) + ": " + msg)
}

func (p *parser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) eat(c byte) bool {
	if p.pos < len(p.data) && p.data[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

// end accepts only white space after the object.
func (p *parser) end() error {
	p.space()
	if p.pos != len(p.data) {
		return p.fail("data after the object")
	}
	return nil
}

// int reads an integer.
func (p *parser) int() (int, error) {
	start := p.pos
	if p.pos < len(p.data) && p.data[p.pos] == '-' {
		p.pos++
	}
	for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
		p.pos++
	}
	n, err := strconv.Atoi(string(p.data[start:p.pos]))
	if err != nil {
		return 0, p.fail("not an integer")
	}
	return n, nil
}

// uint reads a non-negative integer.
func (p *parser) uint() (uint64, error) {
	start := p.pos
	for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
		p.pos++
	}
	n, err := strconv.ParseUint(string(p.data[start:p.pos]), 10, 64)
	if err != nil {
		return 0, p.fail("not a non-negative integer")
	}
	return n, nil
}

// str reads a string, undoing JSON's escapes.
func (p *parser) str() (string, error) {
	if !p.eat('"') {
		return "", p.fail("not a string")
	}
	start := p.pos
	// The common case: no escapes.
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		if c == '"' {
			s := validUTF8(p.data[start:p.pos])
			p.pos++
			return s, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", p.fail("control character in a string")
		}
		p.pos++
	}
	b := append([]byte(nil), p.data[start:p.pos]...)
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return validUTF8(b), nil
		case c < 0x20:
			return "", p.fail("control character in a string")
		case c != '\\':
			b = append(b, c)
			p.pos++
			continue
		}
		p.pos++
		if p.pos >= len(p.data) {
			break
		}
		e := p.data[p.pos]
		p.pos++
		switch e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", p.fail(`bad \u escape`)
			}
			if utf16.IsSurrogate(r) {
				// A pair makes one rune; a lone half is U+FFFD, as
				// encoding/json decodes it.
				save := p.pos
				if p.eat('\\') && p.eat('u') {
					if r2, ok := p.hex4(); ok {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							b = utf8.AppendRune(b, dec)
							continue
						}
					}
				}
				p.pos = save
				r = utf8.RuneError
			}
			b = utf8.AppendRune(b, r)
		default:
			return "", p.fail("bad escape")
		}
	}
	return "", p.fail("unterminated string")
}

// validUTF8 is b as a string with each byte that is not UTF-8 replaced by
// U+FFFD, as encoding/json reads strings.
func validUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]byte, 0, len(b)+8)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return string(out)
}

// hex4 reads the four hex digits of a \u escape.
func (p *parser) hex4() (rune, bool) {
	if p.pos+4 > len(p.data) {
		return 0, false
	}
	var r rune
	for _, c := range p.data[p.pos : p.pos+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	p.pos += 4
	return r, true
}

// skip passes over one value of a member the tool does not know.
func (p *parser) skip() error {
	if p.pos >= len(p.data) {
		return p.fail("no value")
	}
	switch c := p.data[p.pos]; {
	case c == '"':
		_, err := p.str()
		return err
	case c == '{' || c == '[':
		// Nested values: count brackets outside strings.
		depth := 0
		for p.pos < len(p.data) {
			switch p.data[p.pos] {
			case '"':
				if _, err := p.str(); err != nil {
					return err
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			p.pos++
			if depth == 0 {
				return nil
			}
		}
		return p.fail("unterminated value")
	default:
		start := p.pos
		for p.pos < len(p.data) && p.data[p.pos] != ',' && p.data[p.pos] != '}' {
			p.pos++
		}
		if p.pos == start {
			return p.fail("no value")
		}
		return nil
	}
}
