package model

import (
	"strings"
	"testing"
)

func TestLogFilter(t *testing.T) {
	lines := []LogLine{
		{Unit: "web/0", Machine: "m1", Level: "debug"},
		{Unit: "web/1", Machine: "m2", Level: "error"},
		{Unit: "db/0", Machine: "m1", Level: "info"},
		{Machine: "m2", Level: "warning"},
		{Node: "n1", Level: "info"},
	}
	for _, c := range []struct {
		f    LogFilter
		want string
	}{
		{LogFilter{}, "web/0 web/1 db/0 machine m2 node n1"},
		{LogFilter{Include: []string{"web"}}, "web/0 web/1"},
		{LogFilter{Include: []string{"web/1", "n1"}}, "web/1 node n1"},
		{LogFilter{Include: []string{"m1"}}, "web/0 db/0"},
		{LogFilter{Exclude: []string{"web"}}, "db/0 machine m2 node n1"},
		{LogFilter{Include: []string{"m2"}, Exclude: []string{"web/1"}}, "machine m2"},
		{LogFilter{Level: "warning"}, "web/1 machine m2"},
	} {
		var got []string
		for i := range lines {
			if c.f.Match(&lines[i]) {
				got = append(got, lines[i].Source())
			}
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%+v matched %q; want %q", c.f, strings.Join(got, " "), c.want)
		}
	}
	if err := (&LogFilter{Level: "loud"}).Check(); err == nil || !strings.Contains(err.Error(), `"debug", "info", "warning" or "error"`) {
		t.Errorf("a bad level: %v", err)
	}
}

func TestLogBatchCheck(t *testing.T) {
	ok := LogLine{Time: 1, Unit: "web/0", Machine: "m1", Level: "info", Origin: OriginHook, Message: "hi"}
	for name, c := range map[string]struct {
		edit func(*LogLine)
		want string
	}{
		"no source":   {func(l *LogLine) { l.Unit, l.Machine = "", "" }, "names a unit"},
		"two sources": {func(l *LogLine) { l.Node = "n1" }, "names a unit"},
		"bad unit":    {func(l *LogLine) { l.Unit = "web" }, "service/N"},
		"level":       {func(l *LogLine) { l.Level = "loud" }, "level must be"},
		"origin":      {func(l *LogLine) { l.Origin = "x" }, "origin must be"},
		"long":        {func(l *LogLine) { l.Message = strings.Repeat("x", MaxLogLine+1) }, "the limit is"},
		"seq":         {func(l *LogLine) { l.Seq = 3 }, "seq is given"},
		"time":        {func(l *LogLine) { l.Time = 0 }, "not a unix time"},
	} {
		l := ok
		c.edit(&l)
		cmd := Command{Op: OpLogs, Logs: &LogBatch{Lines: []LogLine{ok, l}}}
		if err := cmd.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", name, err, c.want)
		}
	}
	if err := (&Command{Op: OpLogs, Logs: &LogBatch{Lines: []LogLine{ok}}}).Validate(); err != nil {
		t.Fatalf("a good batch: %v", err)
	}
	if got := CleanLogMessage("a\x1b[31mred\x00\r\n"); got != "a [31mred " {
		t.Errorf("cleaned %q", got)
	}
}
