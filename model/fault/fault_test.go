package fault

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/model"
)

// Every kind goes out with its status and comes back as the same kind,
// errors.Is its Err* value and no other.
func TestKindsRoundTrip(t *testing.T) {
	for kind, ki := range kinds {
		rec := httptest.NewRecorder()
		Write(rec, Errorf(kind, "it went %s", "wrong"))
		if rec.Code != ki.status {
			t.Errorf("%s: status %d, want %d", kind, rec.Code, ki.status)
		}
		e := Decode(rec.Code, rec.Body.Bytes())
		if e.Kind != kind || e.Message != "it went wrong" || e.Status != ki.status {
			t.Errorf("%s: decoded %+v", kind, e)
		}
		for other, oi := range kinds {
			if got := errors.Is(e, oi.err); got != (other == kind) {
				t.Errorf("%s: errors.Is(%v) = %v", kind, oi.err, got)
			}
		}
		if got := errors.Is(fmt.Errorf("context: %w", e), ki.err); !got {
			t.Errorf("%s: wrapped, errors.Is lost the kind", kind)
		}
	}
}

func TestFromKeepsProblemsAndDropsThePrefix(t *testing.T) {
	ps := model.Problems{{Path: []string{"services", "web", "charm"}, Msg: "not packed"}}
	err := fmt.Errorf("apply deploy: %w", fmt.Errorf("%w: %w", ErrRefused, ps))
	e := From(err, KindInternal)
	if e.Kind != KindRefused || e.Status != http.StatusConflict || len(e.Problems) != 1 {
		t.Fatalf("got %+v", e)
	}
	rec := httptest.NewRecorder()
	Write(rec, e)
	back := Decode(rec.Code, rec.Body.Bytes())
	var got model.Problems
	if !errors.Is(back, ErrRefused) || !errors.As(back, &got) || strings.Join(got[0].Path, ".") != "services.web.charm" {
		t.Fatalf("decoded %+v", back)
	}
	if strings.Contains(From(fmt.Errorf("%w: no such unit", ErrRefused), KindInternal).Message, "command refused") {
		t.Error("the refusal's message repeats what its kind says")
	}
	if k := KindOf(fmt.Errorf("wait: %w", context.DeadlineExceeded), KindInternal); k != KindTimeout {
		t.Errorf("a deadline is %s, want timeout", k)
	}
	if k := KindOf(errors.New("disk full"), KindUnavailable); k != KindUnavailable {
		t.Errorf("an unknown error is %s, want the fallback", k)
	}
}

// Answers that are not an envelope, or name a kind that does not fit
// their status, are read from the status.
func TestDecodeForeignAnswers(t *testing.T) {
	for _, c := range []struct {
		status int
		body   string
		kind   Kind
		msg    string
	}{
		{502, "<html>Bad Gateway</html>\n", KindBadGateway, "<html>Bad Gateway</html>"},
		{503, "", KindUnavailable, "503 Service Unavailable"},
		{409, `{"error":"unit web/0 does not exist"}`, KindRefused, "unit web/0 does not exist"},
		{404, `{"error":"x","kind":"not_registered"}`, KindNotRegistered, "x"},
		{500, `{"error":"x","kind":"refused"}`, KindInternal, "x"},
		{418, `{"error":"x","kind":"made_up"}`, KindBadRequest, "x"},
		{400, strings.Repeat("a", 3*maxMessage), KindBadRequest, strings.Repeat("a", maxMessage) + "..."},
	} {
		e := Decode(c.status, []byte(c.body))
		if e.Kind != c.kind || e.Message != c.msg || e.Status != c.status {
			t.Errorf("Decode(%d, %.40q) = kind %s, message %.40q; want %s, %.40q", c.status, c.body, e.Kind, e.Message, c.kind, c.msg)
		}
	}
}

// FuzzDecode: whatever another node (or something posing as one) answers,
// Decode returns a usable error: a known kind, the status it came with, a
// message, and no panic.
func FuzzDecode(f *testing.F) {
	f.Add(409, []byte(`{"error":"refused","kind":"refused","problems":[{"path":["a","b"],"message":"c"}]}`))
	f.Add(503, []byte(`{"error":"not leader","kind":"not_leader","leader":"10.0.0.1:7001","node":"n2"}`))
	f.Add(500, []byte("panic: runtime error"))
	f.Add(400, []byte(`{"error":""}`))
	f.Add(404, []byte(`{"error":1}`))
	f.Add(200, []byte("\xff\xfe"))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		e := Decode(status, body)
		if _, ok := kinds[e.Kind]; !ok {
			t.Fatalf("unknown kind %q", e.Kind)
		}
		if e.Status != status {
			t.Fatalf("status %d, want %d", e.Status, status)
		}
		if e.Message == "" {
			t.Fatal("empty message")
		}
		if !errors.Is(e, kinds[e.Kind].err) {
			t.Fatalf("not errors.Is its kind %s", e.Kind)
		}
	})
}

// A deploy planned against a revision the environment left is a conflict
// in the model's words, however it was wrapped, on every hop.
func TestMovedEnvironmentIsAConflict(t *testing.T) {
	moved := &model.MovedError{Base: 3, At: 5}
	err := fmt.Errorf("apply: %w", fmt.Errorf("%w: %w", ErrRefused, moved))
	e := From(err, KindInternal)
	if e.Kind != KindConflict || e.Status != http.StatusConflict || e.Message != moved.Error() || !strings.HasPrefix(e.Message, "environment moved: this change was planned against revision 3 and the environment is at 5") {
		t.Fatalf("got %+v", e)
	}
	rec := httptest.NewRecorder()
	Write(rec, e)
	back := Decode(rec.Code, rec.Body.Bytes())
	if !errors.Is(back, ErrConflict) || !errors.Is(back, model.ErrEnvMoved) || errors.Is(back, ErrRefused) {
		t.Fatalf("decoded %+v", back)
	}
	if other := Errorf(KindConflict, "node n1 runs feature level 1, this command needs 2: upgrade n1 first"); errors.Is(other, model.ErrEnvMoved) {
		t.Fatal("a conflict of levels reads as a moved environment")
	}
	if again := From(fmt.Errorf("forwarded: %w", back), KindInternal); again.Kind != KindConflict || !strings.HasSuffix(again.Message, moved.Error()) || !errors.Is(again, model.ErrEnvMoved) {
		t.Fatalf("the next hop answers %+v", again)
	}
}
