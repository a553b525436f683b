package model

import (
	"fmt"
	"testing"
)

// Over the total cap, the environment holding the most drops its oldest
// lines first: a flood from many units of one environment (each within
// its own cap) pushes out none of another environment's lines, nor the
// default environment's, while the store stays within its cap and its
// count stays exact.
func TestBoundedSharesTheTotalAmongEnvironments(t *testing.T) {
	s := NewLogStore()
	b := NewBounded(8<<10, 64<<10, logSlot, s.measure, s.stamp, s.seq).GroupBy(EnvOfKey)
	quiet := []LogLine{line("db/0", "default-line")}
	qa := line("db/0", "qa-line")
	qa.Env = "qa"
	quiet = append(quiet, qa)
	b.Add(quiet)
	for i := 0; i < 2000; i++ {
		l := line(fmt.Sprintf("web/%d", i%200), fmt.Sprintf("dev flood %d", i))
		l.Env = "dev"
		b.Add([]LogLine{l})
	}
	st := b.Stats()
	if st.Bytes > 64<<10 || st.Dropped == 0 {
		t.Fatalf("stats %+v: want within the cap, with dev's oldest dropped", st)
	}
	if got := recount(b); got != st.Bytes {
		t.Fatalf("counted %d bytes, holds %d", st.Bytes, got)
	}
	for _, key := range []string{"db/0", "qa/db/0"} {
		got, _ := b.Read(0, func(k string) bool { return k == key }, nil, 0, false)
		if len(got) != 1 {
			t.Errorf("%s kept %d lines; want its one line, untouched by dev's flood", key, len(got))
		}
	}
	if EnvOfKey("dev/web/1") != "dev" || EnvOfKey("web/1") != "" || EnvOfKey("machine/m1") != "" {
		t.Errorf("EnvOfKey: %q %q %q", EnvOfKey("dev/web/1"), EnvOfKey("web/1"), EnvOfKey("machine/m1"))
	}
	// Without groups, the same flood pushes the oldest lines out, the
	// quiet ones first: the order a store of one environment keeps.
	one := NewBounded(8<<10, 64<<10, logSlot, s.measure, s.stamp, s.seq)
	one.Add(quiet)
	for i := 0; i < 2000; i++ {
		l := line(fmt.Sprintf("web/%d", i%200), fmt.Sprintf("dev flood %d", i))
		l.Env = "dev"
		one.Add([]LogLine{l})
	}
	if got, _ := one.Read(0, func(k string) bool { return k == "db/0" }, nil, 0, false); len(got) != 0 {
		t.Errorf("one group: the default's line survived a flood it is older than: %+v", got)
	}
}
