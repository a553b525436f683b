package memgov

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"4GiB": 4 << 30, "512MiB": 512 << 20, "512mib": 512 << 20, "1.5GiB": 3 << 29,
		"2000000000": 2e9, "1GB": 1e9, " 64 MiB ": 64 << 20, "10KiB": 10 << 10, "100B": 100, "0": 0,
	} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GiB", "4 gigs", "-1GiB", "1e9", "0x10", "lots", "NaN", "99999999EiB", "9999999999TiB"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) took it", in)
		} else if !strings.Contains(err.Error(), "size") {
			t.Errorf("ParseSize(%q): %v does not say what a size is", in, err)
		}
	}
}

// fakeCgroup writes a /proc/self/cgroup and the limit files it names.
func fakeCgroup(t *testing.T, self string, files map[string]string) Cgroup {
	t.Helper()
	dir := t.TempDir()
	cg := Cgroup{Root: filepath.Join(dir, "fs"), Self: filepath.Join(dir, "self")}
	if err := os.WriteFile(cg.Self, []byte(self), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		p := filepath.Join(cg.Root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return cg
}

func TestCgroupLimit(t *testing.T) {
	cases := []struct {
		name  string
		self  string
		files map[string]string
		want  int64
		err   string
	}{
		{"v2 limited", "0::/fixpoint.slice/n1\n", map[string]string{"fixpoint.slice/n1/memory.max": "4294967296\n"}, 4 << 30, ""},
		{"v2 max", "0::/n1\n", map[string]string{"n1/memory.max": "max\n"}, 0, ""},
		{"v2 root without the file", "0::/\n", nil, 0, ""},
		{"v1 limited", "4:memory:/docker/abc\n0::/\n", map[string]string{"memory/docker/abc/memory.limit_in_bytes": "1073741824"}, 1 << 30, ""},
		{"v1 unlimited", "4:cpuacct,memory:/x\n", map[string]string{"memory/x/memory.limit_in_bytes": "9223372036854771712"}, 0, ""},
		{"garbage", "0::/n1\n", map[string]string{"n1/memory.max": "lots"}, 0, "not a number of bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := fakeCgroup(t, c.self, c.files).Limit()
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "--memory-limit") {
					t.Fatalf("Limit() = %d, %v; want an error saying %q and the flag to use", got, err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("Limit() = %d, %v; want %d", got, err, c.want)
			}
		})
	}
	if n, err := (Cgroup{Root: t.TempDir(), Self: filepath.Join(t.TempDir(), "none")}).Limit(); n != 0 || err != nil {
		t.Fatalf("no cgroup file: %d, %v; want no limit", n, err)
	}
}

func TestResolvePrecedence(t *testing.T) {
	cg := fakeCgroup(t, "0::/n1\n", map[string]string{"n1/memory.max": "2147483648"})
	noEnv := func(string) (string, bool) { return "", false }
	check := func(name string, l Limit, err error, bytes int64, source string) {
		t.Helper()
		if err != nil || l.Bytes != bytes || l.Source != source {
			t.Errorf("%s: %+v, %v; want %d from %s", name, l, err, bytes, source)
		}
	}
	l, err := Resolve("", noEnv, cg)
	check("cgroup default", l, err, 2<<30, SourceCgroup)
	l, err = Resolve("4GiB", noEnv, cg)
	check("flag over cgroup", l, err, 4<<30, SourceFlag)
	l, err = Resolve("none", noEnv, cg)
	check("none over cgroup", l, err, 0, SourceNone)
	l, err = Resolve("", noEnv, Cgroup{Root: t.TempDir(), Self: "/nonexistent"})
	check("nothing", l, err, 0, SourceNone)

	old := debug.SetMemoryLimit(3 << 30)
	defer debug.SetMemoryLimit(old)
	env := func(k string) (string, bool) { return "3GiB", k == "GOMEMLIMIT" }
	l, err = Resolve("4GiB", env, cg)
	check("GOMEMLIMIT over the flag", l, err, 3<<30, SourceEnv)

	for _, bad := range []string{"4 gigs", "1MiB", "-4GiB"} {
		_, err := Resolve(bad, noEnv, cg)
		if err == nil || !strings.Contains(err.Error(), "--memory-limit") {
			t.Errorf("Resolve(%q): %v; want an error naming the flag", bad, err)
		}
	}
}
