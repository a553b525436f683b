package main

import (
	"archive/zip"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// zipCharm packs the charm directory src as charmcraft does (a zip with
// Unix modes) into the file dst.
func zipCharm(t *testing.T, src, dst string) {
	t.Helper()
	f, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		h := &zip.FileHeader{Name: filepath.ToSlash(rel), Method: zip.Deflate}
		h.SetMode(fi.Mode())
		w, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestImportJujuBundleEndToEnd imports Juju's own telegraf test bundle
// and vets the result against stand-ins of its charms in a charm
// repository holding both forms: influxdb.charm (a charmcraft zip) and
// telegraf/ and juju-qa-test/ (directories).
func TestImportJujuBundleEndToEnd(t *testing.T) {
	charms, err := filepath.Abs("../../testdata/bundles/charms")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	repo := filepath.Join(work, "repo")
	copyDir(t, filepath.Join(charms, "telegraf"), filepath.Join(repo, "telegraf"))
	copyDir(t, filepath.Join(charms, "juju-qa-test"), filepath.Join(repo, "juju-qa-test"))
	zipCharm(t, filepath.Join(charms, "influxdb"), filepath.Join(repo, "influxdb.charm"))
	cache := []string{"XDG_CACHE_HOME=" + filepath.Join(work, "cache"), "FIXPOINT_CHARM_REPO="}

	env := filepath.Join(work, "env", "metrics.cue")
	if err := os.MkdirAll(filepath.Dir(env), 0o755); err != nil {
		t.Fatal(err)
	}
	bundle, _ := filepath.Abs("../../testdata/bundles/juju/telegraf_bundle.yaml")
	r := runFixpoint(t, time.Minute, "", cache, "import", bundle, "--output", env, "--repository", repo)
	if r.code != exitOK {
		t.Fatalf("import: %d\n%s", r.code, r.stderr)
	}
	for _, w := range []string{"telegraf_bundle.yaml:10:5: warning: application \"influxdb\": constraints kept as a comment", "wrote " + env} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("import's stderr lacks %q:\n%s", w, r.stderr)
		}
	}

	r = runFixpoint(t, time.Minute, "", cache, "vet", "--repository", repo, env)
	if r.code != exitOK || !strings.Contains(r.stdout, "ok: 3 services, 2 relations") {
		t.Fatalf("vet --repository: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runFixpoint(t, time.Minute, "", append(cache, "FIXPOINT_CHARM_REPO="+repo), "vet", env)
	if r.code != exitOK {
		t.Fatalf("vet with $FIXPOINT_CHARM_REPO: %d\n%s", r.code, r.stderr)
	}
	// The archive was extracted once, into the user's cache, by its hash.
	if ents, err := os.ReadDir(filepath.Join(work, "cache", "fixpoint", "charms", "extracted")); err != nil || len(ents) != 1 {
		t.Errorf("extracted: %v %v", ents, err)
	}
	r = runFixpoint(t, time.Minute, "", cache, "vet", env)
	if r.code != exitFailed || !strings.Contains(r.stderr, `metrics.cue:`) || !strings.Contains(r.stderr, `charm "influxdb" is not a directory beside the environment file and no charm repository is set`) {
		t.Errorf("vet without a repository: %d\n%s", r.code, r.stderr)
	}

	// An existing file is not overwritten without --force.
	r = runFixpoint(t, time.Minute, "", cache, "import", bundle, "--output", env)
	if r.code != exitFailed || !strings.Contains(r.stderr, "--force") {
		t.Errorf("import over an existing file: %d\n%s", r.code, r.stderr)
	}
}

// TestImportLocalCharmPath imports Juju's trusted_bundle.yaml, whose charm
// is a path relative to the bundle: the environment file written
// elsewhere names it relative to itself, and vet finds it.
func TestImportLocalCharmPath(t *testing.T) {
	bundle, _ := filepath.Abs("../../testdata/bundles/juju/trusted_bundle.yaml")
	env := filepath.Join(t.TempDir(), "trusted.cue")
	clean := []string{"XDG_CACHE_HOME=" + t.TempDir(), "FIXPOINT_CHARM_REPO="}
	r := runFixpoint(t, time.Minute, "", clean, "import", bundle, "--output", env)
	if r.code != exitOK || !strings.Contains(r.stderr, "trust kept as a comment") {
		t.Fatalf("import: %d\n%s", r.code, r.stderr)
	}
	if r := runFixpoint(t, time.Minute, "", clean, "vet", env); r.code != exitOK {
		t.Fatalf("vet: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestImportRefusals(t *testing.T) {
	dir := t.TempDir()
	charms, _ := filepath.Abs("../../testdata/bundles/charms")
	bad := filepath.Join(dir, "bundle.yaml")
	src := "applications:\n  telegraf:\n    charm: telegraf\n    num_units: 2\n  db:\n    charm: influxdb\n    num_unit: 1\nrelations:\n- [telegraf, influx]\n"
	if err := os.WriteFile(bad, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "env.cue")
	r := runFixpoint(t, time.Minute, "", []string{"XDG_CACHE_HOME=" + filepath.Join(dir, "cache")}, "import", bad, "--output", out, "--repository", charms)
	if r.code != exitFailed {
		t.Fatalf("import: %d\n%s", r.code, r.stderr)
	}
	for _, w := range []string{
		`bundle.yaml:4:16: application "telegraf": num_units is 2 but charm telegraf is subordinate`,
		`bundle.yaml:7:5: application "db": unknown field "num_unit"; did you mean "num_units"?`,
		`bundle.yaml:9:14: relation endpoint "influx" names application "influx", which the bundle does not define`,
		"3 problems; nothing written",
	} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused import wrote %s", out)
	}
}

// TestImportOverlay merges charmed-kubernetes's AWS overlay onto its
// bundle; the overlay alone is refused at each relation naming an
// application only the bundle defines.
func TestImportOverlay(t *testing.T) {
	dir, _ := filepath.Abs("../../testdata/bundles/charmed-kubernetes")
	overlay := filepath.Join(dir, "aws-overlay.yaml")
	clean := []string{"XDG_CACHE_HOME=" + t.TempDir(), "FIXPOINT_CHARM_REPO="}
	r := runFixpoint(t, time.Minute, "", clean, "import", filepath.Join(dir, "bundle.yaml"), "--overlay", overlay)
	if r.code != exitOK {
		t.Fatalf("import --overlay: %d\n%s", r.code, r.stderr)
	}
	for _, w := range []string{`"aws-integrator-kubernetes-worker": ["aws-integrator", "kubernetes-worker"]`, `name:       "charmed-kubernetes"`} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("output lacks %s:\n%s", w, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "aws-overlay.yaml:9:5: warning: application \"aws-integrator\": trust kept as a comment") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	r = runFixpoint(t, time.Minute, "", clean, "import", overlay)
	if r.code != exitFailed || !strings.Contains(r.stderr, `aws-overlay.yaml:14:24: relation endpoint "kubernetes-control-plane" names application "kubernetes-control-plane", which the bundle does not define`) {
		t.Errorf("the overlay alone: %d\n%s", r.code, r.stderr)
	}
}

// TestUpRunsACharmcraftArchiveFromTheRepository runs, with up, a charm
// named by bare name and found in --repository as a charmcraft-style
// archive: dispatch (kept executable from the zip's modes) runs
// src/charm.sh, as charmcraft's runs src/charm.py.
func TestUpRunsACharmcraftArchiveFromTheRepository(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	src := filepath.Join(work, "src")
	files := map[string]string{
		"metadata.yaml":        "name: zipped\nsummary: an ops-style charm as charmcraft packs it\n",
		"dispatch":             "#!/bin/sh\nexec ./src/charm.sh\n",
		"hooks/install":        "#!/bin/sh\nexec ./src/charm.sh\n",
		"src/charm.sh":         "#!/bin/sh\nstatus-set active \"ran ${JUJU_DISPATCH_PATH} from an archive\"\n",
		"venv/ops/__init__.py": "",
	}
	for name, body := range files {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if !strings.HasSuffix(name, ".yaml") && !strings.HasSuffix(name, ".py") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	repoDir := filepath.Join(work, "repo")
	if err := os.MkdirAll(repoDir, 0o755); err != nil {
		t.Fatal(err)
	}
	zipCharm(t, src, filepath.Join(repoDir, "zipped.charm"))
	env := filepath.Join(work, "env.cue")
	if err := os.WriteFile(env, []byte(`apiVersion: "fixpoint/v1"
name:       "zipped"
services: app: {charm: "zipped", units: 1}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(work, "data")
	r := runFixpoint(t, 5*time.Minute, "", []string{"FIXPOINT_CHARM_REPO="}, "up", "-f", env, "--repository", repoDir, "--data-dir", data, "--until-converged", "--timeout", "4m")
	if r.code != exitOK || !strings.Contains(r.stdout, "from an archive") {
		t.Fatalf("up exited %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if ents, err := os.ReadDir(filepath.Join(data, "cache", "extracted")); err != nil || len(ents) != 1 {
		t.Errorf("up's cache holds %v (%v); want the one extraction", ents, err)
	}
}
