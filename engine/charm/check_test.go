package charm

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/schemas"
)

func TestCheckWithoutPacking(t *testing.T) {
	builds := goBuilds.Load()
	c, err := Check("testdata/env/env.cue")
	if err != nil {
		t.Fatal(err)
	}
	if goBuilds.Load() != builds {
		t.Errorf("Check built a hook; vet must not build anything")
	}
	gocharm, _ := filepath.Abs("testdata/gocharm")
	if len(c.Metas) != 2 || c.Metas[gocharm] == nil || len(c.Packed) != 0 {
		t.Errorf("metas %v, packed %v", c.Metas, c.Packed)
	}
	svcs := c.Env.Env.Services
	if svcs["web"].CharmHash != PlaceholderHash(gocharm) || svcs["api"].CharmHash != svcs["web"].CharmHash {
		t.Errorf("hashes: web %q api %q", svcs["web"].CharmHash, svcs["api"].CharmHash)
	}
	if c.Charms[svcs["web"].CharmHash].Meta.Name != "gocharm" {
		t.Errorf("charms %v", c.Charms)
	}
	d := c.Desired
	if d == nil || d.Services["web"].Units != 2 || d.Services["api"].Units != 1 || d.Services["web"].Config["port"] != int64(9090) || d.Services["api"].Config["port"] != int64(8080) {
		t.Errorf("desired %+v", d)
	}
}

func TestCheckAndPack(t *testing.T) {
	cache := t.TempDir()
	c, err := CheckAndPack(cache, "testdata/env")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Packed) != 2 {
		t.Fatalf("packed %v", c.Packed)
	}
	svcs := c.Env.Env.Services
	for name, want := range map[string]bool{"web": false, "old": true} {
		h := svcs[name].CharmHash
		ch := c.Charms[h]
		if len(h) != 64 || ch == nil || ch.Legacy != want || ch.Size == 0 {
			t.Errorf("%s: hash %q charm %+v", name, h, ch)
		}
	}
	// Packing again finds the same hashes.
	again, err := CheckAndPack(cache, "testdata/env")
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range again.Env.Env.Services {
		if s.CharmHash != svcs[name].CharmHash {
			t.Errorf("%s: hash changed from %s to %s", name, svcs[name].CharmHash, s.CharmHash)
		}
	}
}

func TestCheckReportsSchemaAndResolveProblemsAsOneError(t *testing.T) {
	_, err := Check("../../testdata/broken/many-resolve-mistakes/env.cue")
	var se *schemas.Error
	if !errors.As(err, &se) || len(se.Problems) != 4 {
		t.Fatalf("err = %v", err)
	}
	for _, p := range se.Problems {
		if !strings.HasSuffix(p.File, filepath.Join("many-resolve-mistakes", "env.cue")) || p.Line == 0 {
			t.Errorf("problem not placed in env.cue: %s", p)
		}
	}
}
