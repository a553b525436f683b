package model

import (
	"fmt"
	"strings"
	"testing"
)

func TestChangeSummarisesLongUnitLists(t *testing.T) {
	var units []string
	for i := 3; i <= 99999; i++ {
		units = append(units, fmt.Sprintf("web/%d", i))
	}
	for _, c := range []struct {
		ch   Change
		want string
	}{
		{Change{Kind: AddUnits, Service: "web", Units: units}, "+ units web/3 … web/99999 (99,997 units)"},
		{Change{Kind: RemoveUnits, Service: "web", Units: units}, "- units web/3 … web/99999 (99,997 units) (go dying)"},
		{Change{Kind: RemoveService, Service: "web", Units: units}, "- service web (units go dying: web/3 … web/99999 (99,997 units))"},
		{Change{Kind: AddUnits, Service: "web", Units: units[:ListedUnits]}, "+ units " + strings.Join(units[:ListedUnits], ", ")},
	} {
		if got := c.ch.String(); got != c.want {
			t.Errorf("%s of %d units: %q, want %q", c.ch.Kind, len(c.ch.Units), got, c.want)
		}
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 99997: "99,997", 1234567: "1,234,567", -1000: "-1,000"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestLargeServices(t *testing.T) {
	n, small := 100000, 1000
	e := &Environment{Services: map[string]ServiceSpec{"web": {Units: &n}, "db": {Units: &small}, "log": {}}}
	ps := e.LargeServices(DefaultWarnUnits)
	if len(ps) != 1 || strings.Join(ps[0].Path, ".") != "services.web.units" || !strings.Contains(ps[0].Msg, "100,000 units, more than 1,000 per service") {
		t.Fatalf("LargeServices(1000) = %v", ps)
	}
	if ps := e.LargeServices(0); ps != nil {
		t.Fatalf("LargeServices(0) = %v, want none", ps)
	}
}
