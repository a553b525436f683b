package hooktool

import (
	"bytes"
	"strings"
	"testing"
)

func TestFileArg(t *testing.T) {
	for _, c := range []struct {
		args []string
		path string
		ok   bool
	}{
		{[]string{"--file", "s.yaml"}, "s.yaml", true},
		{[]string{"-r", "db:1", "-file=-"}, "-", true},
		{[]string{"--file=a=b"}, "a=b", true},
		{[]string{"a=1", "--", "--file", "x"}, "", false},
		{[]string{"--file"}, "", false},
		{[]string{"file=x"}, "", false},
	} {
		path, ok := FileArg(c.args)
		if path != c.path || ok != c.ok {
			t.Errorf("FileArg(%q) = %q, %v; want %q, %v", c.args, path, ok, c.path, c.ok)
		}
	}
}

func TestMainOutsideHook(t *testing.T) {
	t.Setenv(EnvSocket, "")
	var out, errb bytes.Buffer
	if code := Command([]string{"/x/relation-get", "-"}, nil, &out, &errb); code != ExitFailed || !strings.Contains(errb.String(), "works only inside a hook") {
		t.Errorf("relation-get outside a hook: exit %d, stderr %q", code, errb.String())
	}
}

func TestFileTooLarge(t *testing.T) {
	t.Setenv(EnvSocket, "/nonexistent")
	t.Setenv(EnvToken, "t")
	var out, errb bytes.Buffer
	big := strings.NewReader(strings.Repeat("x", MaxRequest+1))
	if code := Main("relation-set", []string{"--file", "-"}, big, &out, &errb); code != ExitFailed || !strings.Contains(errb.String(), "larger than") {
		t.Errorf("relation-set of a too large file: exit %d, stderr %q", code, errb.String())
	}
}
