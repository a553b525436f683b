package charmapi

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestUnitOrder(t *testing.T) {
	units := []string{"web/10", "db/3", "web/2", "web/x", "db", "web/1"}
	SortUnits(units)
	want := []string{"db", "db/3", "web/x", "web/1", "web/2", "web/10"}
	if !reflect.DeepEqual(units, want) {
		t.Errorf("sorted %v; want %v", units, want)
	}
	if UnitNumber("web/x") != -1 || UnitNumber("web") != -1 || UnitNumber("web/7") != 7 {
		t.Error("UnitNumber")
	}
	if ServiceOf("web/7") != "web" || ServiceOf("web") != "web" {
		t.Error("ServiceOf")
	}
	in := []string{"b/1", "a/0"}
	if JoinUnits(in) != "a/0 b/1" || in[0] != "b/1" {
		t.Error("JoinUnits sorted its input or joined wrongly")
	}
}

func TestOptionsTypes(t *testing.T) {
	var cfg map[string]any
	if err := json.Unmarshal([]byte(`{"n": 3, "f": 2.5, "big": 1e300, "s": "x", "b": false, "ns": "12", "null": null}`), &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["num"] = json.Number("9")
	cfg["i64"] = int64(5)
	o := (&Universe{Config: cfg}).Options()
	if o.Int("n", 0) != 3 || o.Int("num", 0) != 9 || o.Int("i64", 0) != 5 || o.Int("ns", 0) != 12 || o.Int("null", 7) != 7 {
		t.Error("Int")
	}
	if o.Float("f", 0) != 2.5 || o.Float("n", 0) != 3 || o.Float("absent", 1.5) != 1.5 {
		t.Error("Float")
	}
	if o.Bool("b", true) || !o.Bool("absent", true) || o.String("s", "") != "x" {
		t.Error("Bool/String")
	}
	if !o.Has("n") || o.Has("null") || o.Has("absent") {
		t.Error("Has")
	}
	if o.Err() != nil {
		t.Fatalf("unexpected error: %v", o.Err())
	}
	if o.Int("f", 1) != 1 || o.Int("big", 2) != 2 || o.Bool("s", true) != true || o.String("n", "d") != "d" {
		t.Error("bad values should read as the default")
	}
	err := o.Err()
	for _, name := range []string{`"f"`, `"big"`, `"s"`, `"n"`} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("error %v does not name %s", err, name)
		}
	}
}

func TestFileUsesTheUnitDirectory(t *testing.T) {
	u := &Universe{Unit: "web/0"}
	if got := u.File("web.conf"); got != "web.conf" {
		t.Errorf("without a directory: %q", got)
	}
	dir := t.TempDir()
	u.Dir = dir
	if got := u.File("web.conf"); got != filepath.Join(dir, "web.conf") {
		t.Errorf("with a directory: %q", got)
	}
	if got := u.File("/etc/x"); got != "/etc/x" {
		t.Errorf("absolute: %q", got)
	}
	cp := *u
	if got := cp.File("web.conf"); got != filepath.Join(dir, "web.conf") {
		t.Errorf("a copy keeps the directory: %q", got)
	}
	if b, _ := json.Marshal(u); strings.Contains(string(b), dir) {
		t.Errorf("the directory must not reach the universe's JSON: %s", b)
	}
}

func TestResultBuilders(t *testing.T) {
	r := NewResult()
	r.SetLocal("db:1", map[string]string{"a": "1"})
	r.Local("db:1").Set("b", "2")
	if !reflect.DeepEqual(r.Relations["db:1"].Local, map[string]string{"a": "1", "b": "2"}) {
		t.Errorf("Local after SetLocal: %v", r.Relations["db:1"].Local)
	}
	r.App("db:1").Set("c", "3")
	if r.Relations["db:1"].App["c"] != "3" || r.Relations["db:1"].Local["a"] != "1" {
		t.Errorf("App lost Local: %+v", r.Relations["db:1"])
	}
	r.PrivateState().Set("k", "v")
	r.ClosePorts()
	out, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"ports":[]`) || !strings.Contains(string(out), `"state":{"k":"v"}`) {
		t.Errorf("encoded %s", out)
	}
	var zero Result
	zero.Local("x:0")
	if zero.Relations["x:0"].Local == nil {
		t.Error("Local on a zero Result")
	}
	r2 := NewResult().Raise(StatusWaiting, "first").Raise(StatusWaiting, "second")
	if r2.Status.Message != "first" {
		t.Errorf("Raise replaced an equal status: %v", r2.Status)
	}
}
