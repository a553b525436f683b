package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// checkEnvPicker adds environment dev beside the up on data, whose
// default environment the page d shows 60 services of: the picker lists
// both, the page shows the one the URL names, and picking the default
// one goes back to its 60 services.
func checkEnvPicker(t *testing.T, d *dash, data string) {
	t.Helper()
	if r := fixpoint(t, time.Minute, "env", "add", "dev", "--data-dir", data); r.code != 0 {
		t.Fatalf("env add dev: %s", r.stderr)
	}
	if r := fixpoint(t, time.Minute, "apply", "-f", envFile(t, t.TempDir(), "dev", 2), "--yes", "--data-dir", data); r.code != 0 {
		t.Fatalf("apply dev: %s", r.stderr)
	}
	v := d.open("&env=dev", 1)
	if len(v.Cards) != 1 || v.Cards[0].Name != "db" || !strings.Contains(v.Hash, "env=dev") {
		t.Errorf("dev's page: cards %+v, hash %q", v.Cards, v.Hash)
	}
	picker := func() string {
		ctx, cancel := context.WithTimeout(d.ctx, time.Minute)
		defer cancel()
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => { const p = document.getElementById('env-picker'); return p.hidden ? 'hidden' : p.value + ' of ' + [...p.options].map((o) => o.value || 'default').join(','); })()`))
		if err != nil {
			t.Fatalf("chromium: reading the picker: %v", err)
		}
		return got
	}
	rafttest.Eventually(t, time.Minute, "the picker listing both environments, dev picked", func() error {
		if got := picker(); got != "dev of default,dev" {
			return fmt.Errorf("picker %q", got)
		}
		return nil
	})
	d.shot("dashboard-env-dev.png")
	ctx, cancel := context.WithTimeout(d.ctx, time.Minute)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const p = document.getElementById('env-picker'); p.value = ''; p.dispatchEvent(new Event('change')); return true; })()`)); err != nil {
		t.Fatalf("chromium: picking the default environment: %v", err)
	}
	cancel()
	d.until("the default environment's 60 services after the pick", func(v *pageView) error {
		if len(v.Cards) != 60 || strings.Contains(v.Hash, "env=") {
			return fmt.Errorf("%d cards, hash %q", len(v.Cards), v.Hash)
		}
		return nil
	})
}
