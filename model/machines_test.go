package model

import (
	"strings"
	"testing"
)

// TestMachineIDs: each machine gets Juju's next machine id when it first
// registers, keeps it when its agent registers again or is reset, and a
// forgotten machine's id is never given again.
func TestMachineIDs(t *testing.T) {
	s := NewState()
	idx := uint64(0)
	register := func(name, addr string) {
		t.Helper()
		idx++
		apply(t, s, idx, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: name, Address: addr, Number: true}})
	}
	ids := func() map[string]string {
		out := map[string]string{}
		for n, m := range s.Machines {
			out[n] = m.ID
		}
		return out
	}
	register("m1", "10.0.0.1")
	register("m2", "10.0.0.2")
	register("m1", "10.0.0.9") // its agent again, at a new address
	idx++
	apply(t, s, idx, &Command{Op: OpReset, Reset: &ResetMachine{Name: "m1"}})
	idx++
	apply(t, s, idx, &Command{Op: OpReset, Reset: &ResetMachine{Name: "m2", Forget: true}})
	register("m3", "10.0.0.3")
	register("m2", "10.0.0.2")
	want := map[string]string{"m1": "0", "m3": "2", "m2": "3"}
	if got := ids(); len(got) != len(want) || got["m1"] != want["m1"] || got["m2"] != want["m2"] || got["m3"] != want["m3"] {
		t.Errorf("machine ids = %v; want %v", got, want)
	}

	// A machine registered before ids were given gets one when its agent
	// registers again, though nothing else about it changed.
	old := *s.Machines["m3"]
	old.ID = ""
	s.Machines["m3"] = &old
	if noop, err := s.checkRegister(&RegisterMachine{Name: "m3", Address: "10.0.0.3", Number: true}); noop || err != nil {
		t.Fatalf("re-registering an unnumbered machine: noop %v, %v; want it applied", noop, err)
	}
	register("m3", "10.0.0.3")
	if got := s.Machines["m3"].ID; got != "4" {
		t.Errorf("unnumbered m3 got id %q; want the next, 4", got)
	}
	if noop, _ := s.checkRegister(&RegisterMachine{Name: "m3", Address: "10.0.0.3", Number: true}); !noop {
		t.Error("re-registering a numbered machine as it is is not a no-op")
	}
	// Below the level that numbers machines, registrations ask for no id:
	// a new machine gets none, and renewing an unnumbered one as it is
	// changes nothing, so such a cluster never proposes it again and
	// again.
	idx++
	apply(t, s, idx, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "m4", Address: "10.0.0.4"}})
	if got := s.Machines["m4"].ID; got != "" {
		t.Errorf("m4 registered without Number got id %q; want none", got)
	}
	if noop, _ := s.checkRegister(&RegisterMachine{Name: "m4", Address: "10.0.0.4"}); !noop {
		t.Error("renewing an unnumbered machine without Number is not a no-op")
	}
	// The level rises: the machines still without an id get theirs.
	idx++
	apply(t, s, idx, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "m0", Address: "10.0.0.10"}})
	s.NumberMachines(idx)
	if m0, m4 := s.Machines["m0"], s.Machines["m4"]; m0.ID != "5" || m4.ID != "6" || m0.Index != idx || s.Machines["m1"].ID != "0" {
		t.Errorf("numbered at the level's rise: m0 %q, m4 %q, m1 %q; want 5 and 6 in name order, m1 kept", m0.ID, m4.ID, s.Machines["m1"].ID)
	}
}

// TestRebootResultChecked: a result's reboot is a boolean the model takes
// as is; the boot a Seen records is never negative.
func TestRebootResultChecked(t *testing.T) {
	c := &Command{Op: OpResults, Results: []Result{{Unit: "web/0", Reboot: true, Seen: &Seen{Boot: 1}}}}
	if err := c.Validate(); err != nil {
		t.Errorf("a reboot result: %v", err)
	}
	c.Results[0].Seen.Boot = -1
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "seen boot -1") {
		t.Errorf("a negative boot: %v", err)
	}
}
