package model

import "testing"

// resolved --no-retry on a dying unit whose last run failed counts that
// run as done, as its success would: the unit goes, and its service with
// it once no unit is left.
func TestResolvedNoRetryFinishesADyingUnit(t *testing.T) {
	s := NewState()
	apply(t, s, 1, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "a", Address: "10.0.0.1"}})
	apply(t, s, 2, deployCmd(env(nil)))
	apply(t, s, 3, &Command{Op: OpResults, Results: []Result{
		{Unit: "web/0", Hash: "a0", Seen: &Seen{Life: Alive}},
		{Unit: "web/1", Hash: "a1", Seen: &Seen{Life: Alive}},
	}})
	e := env(nil)
	delete(e.Services, "web")
	apply(t, s, 4, deployCmd(e))
	if svc := s.Services["web"]; svc == nil || svc.Life != Dying {
		t.Fatalf("web after its removal: %+v", svc)
	}
	apply(t, s, 5, &Command{Op: OpResults, Results: []Result{
		{Unit: "web/0", Hash: "d0", Seen: &Seen{Life: Dying}},
		{Unit: "web/1", Hash: "d1", Error: "stop hook failed", Seen: &Seen{Life: Dying}},
	}})
	if _, ok := s.Units["web/0"]; ok {
		t.Fatal("web/0 kept after its last run succeeded")
	}
	if u := s.Units["web/1"]; u == nil || u.Error == nil {
		t.Fatalf("web/1 after its last run failed: %+v", u)
	}
	apply(t, s, 6, &Command{Op: OpResolve, Resolve: &ResolveUnit{Unit: "web/1", NoRetry: true}})
	if u, ok := s.Units["web/1"]; ok {
		t.Fatalf("web/1 kept after resolved --no-retry of its last run: life %s, error %v", u.Life, u.Error)
	}
	if _, ok := s.Services["web"]; ok {
		t.Fatal("web kept after its last unit was resolved away")
	}
	if _, ok := s.Services["db"]; !ok {
		t.Fatal("db removed with web")
	}
}

// A dying unit whose failed run saw it alive still has its last run to
// do: --no-retry counts the failed run only, and the unit stays.
func TestResolvedNoRetryKeepsADyingUnitThatSawItselfAlive(t *testing.T) {
	s := NewState()
	apply(t, s, 1, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "a", Address: "10.0.0.1"}})
	apply(t, s, 2, deployCmd(env(nil)))
	apply(t, s, 3, &Command{Op: OpResults, Results: []Result{{Unit: "web/1", Hash: "a0", Seen: &Seen{Life: Alive}}}})
	apply(t, s, 4, &Command{Op: OpResults, Results: []Result{{Unit: "web/1", Hash: "a1", Error: "boom", Seen: &Seen{Life: Alive}}}})
	e := env(nil)
	delete(e.Services, "web")
	apply(t, s, 5, deployCmd(e))
	apply(t, s, 6, &Command{Op: OpResolve, Resolve: &ResolveUnit{Unit: "web/1", NoRetry: true}})
	u, ok := s.Units["web/1"]
	if !ok || u.Life != Dying || u.Error != nil || u.Reconciled != "a1" {
		t.Fatalf("web/1 after --no-retry of a run that saw it alive: %+v", u)
	}
}
