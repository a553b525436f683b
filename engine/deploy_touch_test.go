package engine

import (
	"context"
	"testing"
)

// A config change of one service re-hashes that service's units only, at
// hand-out: the other service's views are not rebuilt, its machines get
// nothing. Before, every deploy rebuilt all views, which at 1,000 units
// delayed the first wake by 0.2-1.5 s (bench/README, "Agents waking").
func TestConfigChangeRehashesOnlyItsService(t *testing.T) {
	ctx := context.Background()
	s, ctl, machines := tenMachinesSettled(t)
	if err := ctl.Refresh(); err != nil {
		t.Fatal(err)
	}
	before := ctl.Stats()

	twoServices(t, s, 2) // a's config changes, b's does not
	if err := ctl.Refresh(); err != nil {
		t.Fatal(err)
	}
	if n := ctl.Stats().Rebuilt - before.Rebuilt; n != 0 {
		t.Errorf("the config change rebuilt %d views at once; want none (a's units are re-hashed at hand-out)", n)
	}
	for _, m := range machines {
		work, err := ctl.WaitForWork(ctx, m, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[byte]int{'a': 1, 'b': 0}[m[0]]; len(work) != want {
			t.Errorf("%s got %d units after a's config changed; want %d", m, len(work), want)
		}
	}
	after := ctl.Stats()
	if n := (after.Rebuilt + after.Built) - (before.Rebuilt + before.Built); n != 5 {
		t.Errorf("%d universes built for the change; want a's 5", n)
	}
}
