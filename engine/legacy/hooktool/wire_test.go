package hooktool

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// wireStrings are strings that JSON escapes or that encoding/json changes:
// quotes, control characters, HTML characters (escaped by the server's
// encoder), U+2028, invalid UTF-8 (becomes U+FFFD), non-BMP runes.
var wireStrings = []string{
	"", "plain", `q"uote\back/slash`, "tab\tnew\nline\rcr\x00nul\x1f\x7f",
	"<a href='x'>&amp;</a>", "line\u2028sep\u2029", "bad\xffutf8\xc3", "é ü 日本 🎉",
	strings.Repeat("x", 5000),
}

// TestWireMatchesEncodingJSON holds the tool's hand-written JSON to what
// the server's encoding/json reads and writes.
func TestWireMatchesEncodingJSON(t *testing.T) {
	for _, s := range wireStrings {
		file := s
		for _, req := range []Request{
			{Token: "t0k", Context: s, Tool: "relation-get", Args: []string{s, "-r", s}},
			{Token: s, Tool: "relation-set", Args: []string{}, File: &file},
			{Tool: "is-leader"},
		} {
			var got Request
			if err := json.Unmarshal(appendRequest(nil, &req), &got); err != nil {
				t.Fatalf("request %q: encoding/json cannot read it: %v", appendRequest(nil, &req), err)
			}
			var want Request
			b, _ := json.Marshal(&req)
			_ = json.Unmarshal(b, &want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("request: got %+v, encoding/json round trip gives %+v", got, want)
			}
		}
		for _, resp := range []Response{{Code: 0, Stdout: s}, {Code: 2, Stderr: s}, {Code: -1, Stdout: s, Stderr: s + "!"}, {Stdout: s, Keep: KeepForHook}, {Stdout: s, Keep: KeepUntilWrite, Gen: 1<<64 - 1}, {}} {
			var buf bytes.Buffer
			if err := json.NewEncoder(&buf).Encode(&resp); err != nil {
				t.Fatal(err)
			}
			got, err := parseResponse(buf.Bytes())
			if err != nil {
				t.Fatalf("response %q: %v", buf.Bytes(), err)
			}
			var want Response
			_ = json.Unmarshal(buf.Bytes(), &want)
			if *got != want {
				t.Errorf("response %q: got %+v, want %+v", buf.Bytes(), *got, want)
			}
		}
	}
}

func TestParseResponseEscapesAndErrors(t *testing.T) {
	got, err := parseResponse([]byte(` {"extra":{"a":[1,"}"]},"stdout":"\ud83c\udf89 \ud800x \u00e9\/","code":3,"n":null} ` + "\n"))
	if err != nil || got.Code != 3 || got.Stdout != "🎉 \ufffdx é/" {
		t.Errorf("escapes: got %+v, %v", got, err)
	}
	for _, bad := range []string{``, `[]`, `{"code":"x"}`, `{"stdout":"a`, `{"code":1`, `{"code":1} x`, `{"stdout":"\q"}`, "{\"stdout\":\"\x01\"}"} {
		if r, err := parseResponse([]byte(bad)); err == nil {
			t.Errorf("parseResponse(%q) = %+v, want an error", bad, r)
		}
	}
}

// FuzzWire checks, for any response the server's encoding/json writes,
// that the tool reads it back unchanged (invalid UTF-8 is U+FFFD by then),
// that any request the tool writes reads back the same with encoding/json,
// and that no input makes the tool's parser panic.
func FuzzWire(f *testing.F) {
	for _, s := range wireStrings {
		f.Add(1, s, s, []byte(s))
	}
	f.Fuzz(func(t *testing.T, code int, stdout, stderr string, raw []byte) {
		_, _ = parseResponse(raw)
		var buf bytes.Buffer
		if err := json.NewEncoder(&buf).Encode(Response{Code: code, Stdout: stdout, Stderr: stderr}); err != nil {
			t.Fatal(err)
		}
		var want Response
		if err := json.Unmarshal(buf.Bytes(), &want); err != nil {
			t.Fatal(err)
		}
		got, err := parseResponse(buf.Bytes())
		if err != nil || *got != want {
			t.Errorf("%q: tool reads %+v (%v), encoding/json %+v", buf.Bytes(), got, err, want)
		}
		req := Request{Token: stdout, Context: stderr, Tool: "relation-get", Args: []string{stdout, string(raw)}, File: &stderr}
		var gotReq, wantReq Request
		if err := json.Unmarshal(appendRequest(nil, &req), &gotReq); err != nil {
			t.Fatalf("request %q: %v", appendRequest(nil, &req), err)
		}
		b, _ := json.Marshal(&req)
		_ = json.Unmarshal(b, &wantReq)
		if !reflect.DeepEqual(gotReq, wantReq) {
			t.Errorf("request: tool writes %+v, encoding/json %+v", gotReq, wantReq)
		}
	})
}
