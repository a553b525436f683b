package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/model"
)

// The resource scenario: testdata/charms/res-classic (POSIX sh hooks) and
// testdata/ops/ops-res (the real ops framework) each declare a payload
// resource and an extra one nobody provides. The environment gives
// payload a file beside it; the CLI uploads it, the agents fetch it, and
// both charms show its first line. Changing the file's content runs
// upgrade-charm on every unit of both services, as Juju does, and
// resource-get of extra fails with Juju's error.

// resourceScenario is one run of the scenario on a topology.
type resourceScenario struct {
	tp      *topology
	env     string
	payload string
	opsDir  string // "" without the ops framework
}

func newResourceScenario(t *testing.T, tp *topology) *resourceScenario {
	s := &resourceScenario{tp: tp, env: filepath.Join(tp.envDir, "res.cue"), payload: filepath.Join(tp.envDir, "payload.txt")}
	if fw := opsFrameworkDir(); fw != "" {
		s.opsDir = packOps(t, fw, "ops-res", filepath.Join(t.TempDir(), "ops-res"))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: \"fixpoint/v1\"\nname: \"res\"\nservices: {\n")
	fmt.Fprintf(&b, "\t\"res-classic\": {charm: %q, units: 2, resources: payload: \"./payload.txt\"}\n", repo("testdata", "charms", "res-classic"))
	if s.opsDir != "" {
		fmt.Fprintf(&b, "\t\"res-ops\": {charm: %q, units: 1, resources: payload: \"payload.txt\"}\n", s.opsDir)
	}
	b.WriteString("}\n")
	if err := os.WriteFile(s.env, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return s
}

// write makes the payload file hold content and returns its digest.
func (s *resourceScenario) write(t *testing.T, content string) string {
	t.Helper()
	if err := os.WriteFile(s.payload, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(content))
	return hex.EncodeToString(sum[:])
}

// cli is tp.cli with room for ops's interpreters under load.
func (s *resourceScenario) cli(args ...string) run {
	tp := s.tp
	tp.t.Helper()
	if tp.c == nil {
		return runFixpoint(tp.t, 15*time.Minute, "", nil, append(args, "--data-dir", tp.upData)...)
	}
	env := []string{"FIXPOINT_ADDR=" + strings.Join(tp.c.addrs, ","), "FIXPOINT_TOKEN=" + tp.c.token}
	return runFixpoint(tp.t, 15*time.Minute, "", env, append(args, tp.c.clientTL...)...)
}

func (s *resourceScenario) units() []string {
	if s.opsDir == "" {
		return []string{"res-classic/0", "res-classic/1"}
	}
	return []string{"res-classic/0", "res-classic/1", "res-ops/0"}
}

// resLog is what a unit's charm recorded of its resource reads.
func (s *resourceScenario) resLog(t *testing.T, unit string) string {
	t.Helper()
	dir := s.tp.unitDir(unit)
	if strings.HasPrefix(unit, "res-ops/") {
		// ops's charm runs in the unit's copy of the charm.
		dir = filepath.Join(dir, "charm")
	}
	b, _ := os.ReadFile(filepath.Join(dir, "res.log"))
	e, _ := os.ReadFile(filepath.Join(dir, "extra.err"))
	return string(b) + "extra.err: " + string(e)
}

// check wants every unit active with the payload's first line, the
// status and show-unit showing digest, and each unit's hooks to have read
// the file through resource-get in the hooks named.
func (s *resourceScenario) check(t *testing.T, digest, first string, hooks map[string]string) {
	t.Helper()
	r := s.cli("status", "-o", "json")
	var st engine.Status
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &st) != nil {
		t.Fatalf("status exited %d: %s%s", r.code, r.stdout, r.stderr)
	}
	for _, svc := range []string{"res-classic", "res-ops"} {
		if ss := st.Services[svc]; ss != nil && ss.Resources["payload"] != digest {
			t.Errorf("status: %s resources %v; want payload %s", svc, ss.Resources, digest)
		}
	}
	for _, unit := range s.units() {
		u := st.Units[unit]
		if u == nil || u.Phase != engine.Settled || u.Status != (model.Status{State: "active", Message: "payload " + first}) {
			t.Errorf("%s: %s", unit, jsonString(u))
			continue
		}
		log := s.resLog(t, unit)
		for _, line := range strings.Split(hooks[strings.Split(unit, "/")[0]], "\n") {
			want := strings.ReplaceAll(line, "PATH", filepath.Join(s.tp.unitDir(unit), "resources", "payload", "payload.txt"))
			if !strings.Contains(log, want) {
				t.Errorf("%s's charm did not record %q:\n%s", unit, want, log)
			}
		}
		if !strings.Contains(log, `could not download resource: resource "extra" not found`) {
			t.Errorf("%s: resource-get of a resource not provided did not fail with Juju's error:\n%s", unit, log)
		}
		got, err := os.ReadFile(filepath.Join(s.tp.unitDir(unit), "resources", "payload", "payload.txt"))
		if err != nil || !strings.HasPrefix(string(got), first+"\n") {
			t.Errorf("%s's resource file: %q, %v", unit, got, err)
		}
	}
	r = s.cli("show-unit", "res-classic/1", "-o", "json")
	var d struct {
		Resources map[string]string `json:"resources"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &d) != nil || d.Resources["payload"] != digest {
		t.Errorf("show-unit res-classic/1: exit %d, resources %v; want payload %s\n%s", r.code, d.Resources, digest, r.stderr)
	}
	if r = s.cli("status"); !strings.Contains(r.stdout, "resource payload "+model.ShortHash(digest)) {
		t.Errorf("status does not show the payload's digest %s:\n%s", model.ShortHash(digest), r.stdout)
	}
}

// run deploys, checks, changes the payload and checks that every unit
// ran upgrade-charm with the new file.
func (s *resourceScenario) run(t *testing.T, deploy func()) {
	v1 := s.write(t, "first payload\nline two\n")
	deploy()
	s.check(t, v1, "first payload", map[string]string{
		"res-classic": "install first payload PATH\nextra missing",
		"res-ops":     "InstallEvent first payload PATH",
	})

	v2 := s.write(t, "second payload\n")
	r := s.cli("plan", "-f", s.env)
	want := fmt.Sprintf("~ service res-classic resource payload %s -> %s", model.ShortHash(v1), model.ShortHash(v2))
	if r.code != exitChanges || !strings.Contains(r.stdout, want) || strings.Contains(r.stdout, "charm") {
		t.Fatalf("plan of a changed payload: exit %d, want %q and no charm change:\n%s%s", r.code, want, r.stdout, r.stderr)
	}
	if r = s.cli("apply", "-f", s.env, "--yes", "--wait", "--timeout", "12m"); r.code != 0 {
		t.Fatalf("apply of a changed payload: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	s.check(t, v2, "second payload", map[string]string{
		"res-classic": "install first payload PATH\nupgrade-charm second payload PATH",
		"res-ops":     "InstallEvent first payload PATH\nUpgradeCharmEvent second payload PATH",
	})
	if r = s.cli("plan", "-f", s.env); r.code != 0 {
		t.Errorf("plan after the change: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestResourcesOnUp(t *testing.T) {
	t.Parallel()
	tp := startUpTopology(t)
	s := newResourceScenario(t, tp)
	s.run(t, func() {
		tp.startUp(s.env)
		if r := s.cli("wait", "--timeout", "12m"); r.code != 0 {
			t.Fatalf("wait: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})
}

// TestResourcesOnCluster runs the scenario on three servers with agents on
// m1 and m2: the file is uploaded to one node and fetched from whichever
// the agents reach, and each agent fetches only what its units use.
func TestResourcesOnCluster(t *testing.T) {
	t.Parallel()
	tp := startServers(t, "cluster", false)
	s := newResourceScenario(t, tp)
	s.run(t, func() {
		if r := s.cli("apply", "-f", s.env, "--yes", "--wait", "--timeout", "12m"); r.code != 0 {
			t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})
	st := tp.status()
	if st == nil || st.Units["res-classic/0"].Machine == st.Units["res-classic/1"].Machine {
		t.Fatalf("the classic units are not spread over m1 and m2: %s", jsonString(st))
	}
}

// TestVetResources: vet refuses a resource the charm does not declare and
// a file that is not there, each at its line.
func TestVetResources(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := filepath.Join(dir, "env.cue")
	body := fmt.Sprintf(`apiVersion: "fixpoint/v1"
name: "res"
services: "res-classic": {
	charm: %q
	resources: {
		payload: "./nowhere.txt"
		sofware: "./env.cue"
	}
}
`, repo("testdata", "charms", "res-classic"))
	if err := os.WriteFile(env, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	r := fixpoint(t, time.Minute, "vet", "-f", env)
	for _, want := range []string{
		`env.cue:6:3: services."res-classic".resources.payload: resource payload: file ` + filepath.Join(dir, "nowhere.txt") + " does not exist",
		`env.cue:7:3: services."res-classic".resources.sofware: charm res-classic declares no resource "sofware" (it declares: extra, payload)`,
	} {
		if r.code != exitFailed || !strings.Contains(r.stderr, want) {
			t.Errorf("vet: exit %d; want %q in:\n%s%s", r.code, want, r.stdout, r.stderr)
		}
	}
}
