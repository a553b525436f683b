package model_test

import (
	"testing"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// TestUnitNamesAgreeWithCharmapi holds model's copy of the unit-name rule
// to charmapi's, which charms use: the engine and the charms must order
// and parse unit names alike.
func TestUnitNamesAgreeWithCharmapi(t *testing.T) {
	names := []string{"web/0", "web/2", "web/10", "web/-1", "web/x", "web", "", "/", "/3", "a/b/4",
		"db/1", "db-2/7", "web/02", "web/ 3", "w\u00e9b/1", "web/99999999999999999999"}
	for _, a := range names {
		u := &model.Unit{Name: a}
		if got, want := u.Number(), charmapi.UnitNumber(a); got != want {
			t.Errorf("number of %q: model %d, charmapi %d", a, got, want)
		}
		if got, want := model.ServiceOf(a), charmapi.ServiceOf(a); got != want {
			t.Errorf("service of %q: model %q, charmapi %q", a, got, want)
		}
		for _, b := range names {
			if got, want := model.UnitLess(a, b), charmapi.UnitLess(a, b); got != want {
				t.Errorf("%q < %q: model %v, charmapi %v", a, b, got, want)
			}
		}
	}
}
