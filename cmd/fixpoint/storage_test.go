package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// A charm that declares storage, run through the real binary: each unit
// gets its instances as directories under the agent's data dir, attached
// before install; the data written there survives an agent restart and a
// charm upgrade; storage-add attaches more within the charm's range; and
// a unit's directory goes with the unit, after its detaching hooks and
// before its stop.

// storageRun is one running environment of a storage charm.
type storageRun struct {
	data, envs string
	up         *upProc
}

// env writes the environment: units of service svc on charm, its logs
// count and more-logs option.
func (r *storageRun) env(t *testing.T, name, svc, charm string, units, logs int, more bool) string {
	t.Helper()
	body := fmt.Sprintf("apiVersion: \"fixpoint/v1\"\nname: \"stores\"\nservices: %q: {charm: %q, units: %d, config: {\"more-logs\": %v}, storage: logs: count: %d}\n",
		svc, charm, units, more, logs)
	path := filepath.Join(r.envs, name+".cue")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// apply applies env and waits for the fixed point.
func (r *storageRun) apply(t *testing.T, env string) {
	t.Helper()
	res := fixpoint(t, 22*time.Minute, "apply", "-f", env, "--yes", "--wait", "--timeout", "20m", "--data-dir", r.data)
	if res.code != 0 {
		t.Fatalf("apply %s exited %d\nstdout:\n%s\nstderr:\n%s\nup:\n%s", filepath.Base(env), res.code, res.stdout, res.stderr, r.up.out)
	}
}

// dir is the directory of a storage instance of unit.
func (r *storageRun) dir(unit, id string) string {
	return filepath.Join(r.data, "agent", "storage", strings.ReplaceAll(unit, "/", "-"), filepath.FromSlash(id))
}

// unitStorage is the unit's instances as the replicated state holds them.
func (r *storageRun) unitStorage(t *testing.T, unit string) []string {
	t.Helper()
	u := stateOf(t, r.data).Units[unit]
	if u == nil {
		t.Fatalf("%s is not in the state", unit)
	}
	return u.Storage
}

// hookLog reads the hooks.log a classic-store unit keeps in its unit
// directory, which outlives the unit.
func (r *storageRun) hookLog(t *testing.T, unit string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.data, "agent", "units", strings.ReplaceAll(unit, "/", "-"), "hooks.log"))
	if err != nil {
		t.Fatalf("%s: %v", unit, err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// hookWords are the first words of a hook log's lines.
func hookWords(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i], _, _ = strings.Cut(l, " ")
	}
	return out
}

func TestStorageClassicCharm(t *testing.T) {
	t.Parallel()
	charm, err := filepath.Abs(repo("testdata", "storage", "classic-store"))
	if err != nil {
		t.Fatal(err)
	}
	r := &storageRun{data: t.TempDir(), envs: t.TempDir()}
	r.up = startUp(t, r.data, r.env(t, "deploy", "store", charm, 2, 1, false))
	r.up.waitConverged(t, 10*time.Minute)

	// Deployed: each unit has its data instance and the one logs instance
	// the environment asked for, numbered in one sequence; both attached
	// before install, with Juju's variables; the directories are 0700.
	want := map[string][]string{"store/0": {"data/0", "logs/1"}, "store/1": {"data/2", "logs/3"}}
	for unit, ids := range want {
		if got := r.unitStorage(t, unit); !slices.Equal(got, ids) {
			t.Fatalf("deploy: %s storage %v; want %v", unit, got, ids)
		}
		log := r.hookLog(t, unit)
		names := hookWords(log)
		if len(names) < 3 || names[0] != "data-storage-attached" || names[1] != "logs-storage-attached" || names[2] != "install" {
			t.Errorf("deploy: %s hooks %v; want data-storage-attached, logs-storage-attached, install first", unit, names)
		}
		if len(log) > 0 && log[0] != "data-storage-attached "+ids[0]+" "+r.dir(unit, ids[0]) {
			t.Errorf("deploy: %s first hook %q; want JUJU_STORAGE_ID %s at %s", unit, log[0], ids[0], r.dir(unit, ids[0]))
		}
		for _, id := range ids {
			fi, err := os.Stat(r.dir(unit, id))
			if err != nil || fi.Mode().Perm() != 0o700 {
				t.Errorf("deploy: %s %s: %v mode %v; want a 0700 directory", unit, id, err, fi)
			}
		}
		if b, _ := os.ReadFile(filepath.Join(r.dir(unit, ids[0]), "install.txt")); string(b) != "written at install by "+unit+"\n" {
			t.Errorf("deploy: %s install.txt = %q", unit, b)
		}
	}
	st := statusJSON(t, r.data)
	if got := st.Units["store/0"].Storage; !slices.Equal(got, want["store/0"]) {
		t.Errorf("status: store/0 storage %v", got)
	}
	if show := fixpoint(t, time.Minute, "show-unit", "store/1", "--format", "json", "--data-dir", r.data); !strings.Contains(show.stdout, `"storage": [`) || !strings.Contains(show.stdout, `"data/2"`) {
		t.Errorf("show-unit store/1 does not show its storage:\n%s%s", show.stdout, show.stderr)
	}

	// Agent restart: up (and its agent) killed and started again on the
	// same data dir; the data is where it was and nothing runs install.
	r.up.kill()
	r.up = startUp(t, r.data, r.env(t, "deploy", "store", charm, 2, 1, false))
	r.up.waitConverged(t, 10*time.Minute)
	for unit, ids := range want {
		if b, _ := os.ReadFile(filepath.Join(r.dir(unit, ids[0]), "install.txt")); len(b) == 0 {
			t.Errorf("restarted: %s lost install.txt", unit)
		}
		if n := countLine(hookWords(r.hookLog(t, unit)), "install"); n != 1 {
			t.Errorf("restarted: %s ran install %d times", unit, n)
		}
	}

	// Upgrade: a copy of the charm with a new file; upgrade-charm runs and
	// the data stays.
	upgraded := filepath.Join(t.TempDir(), "classic-store")
	if out, err := exec.Command("cp", "-a", charm, upgraded).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(upgraded, "VERSION"), []byte("2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.apply(t, r.env(t, "upgrade", "store", upgraded, 2, 1, false))
	for unit, ids := range want {
		if !slices.Contains(hookWords(r.hookLog(t, unit)), "upgrade-charm") {
			t.Errorf("upgraded: %s ran no upgrade-charm: %v", unit, r.hookLog(t, unit))
		}
		if b, _ := os.ReadFile(filepath.Join(r.dir(unit, ids[0]), "install.txt")); len(b) == 0 {
			t.Errorf("upgraded: %s lost install.txt", unit)
		}
	}

	// storage-add: more-logs makes each unit ask for one logs instance
	// more; it is attached (next number) and its hook runs.
	r.apply(t, r.env(t, "more", "store", upgraded, 2, 1, true))
	for unit := range want {
		got := r.unitStorage(t, unit)
		if len(got) != 3 || !strings.HasPrefix(got[2], "logs/") {
			t.Fatalf("storage-add: %s storage %v; want a third, logs instance", unit, got)
		}
		log := r.hookLog(t, unit)
		if last := log[len(log)-1]; last != "logs-storage-attached "+got[2]+" "+r.dir(unit, got[2]) {
			t.Errorf("storage-add: %s last hook %q; want logs-storage-attached %s", unit, last, got[2])
		}
	}

	// Scale down: store/1 detaches each instance (its data still there)
	// before stop and remove, and its storage directory goes; store/0's
	// stays.
	gone := r.unitStorage(t, "store/1")
	r.apply(t, r.env(t, "down", "store", upgraded, 1, 1, true))
	log := r.hookLog(t, "store/1")
	var tail []string
	for _, l := range log {
		if f := strings.Fields(l); len(f) >= 2 && strings.HasSuffix(f[0], "-storage-detaching") {
			tail = append(tail, f[0]+" "+f[1])
		}
	}
	wantTail := []string{"data-storage-detaching " + gone[0], "logs-storage-detaching " + gone[1], "logs-storage-detaching " + gone[2]}
	if len(tail) != 3 || !slices.Equal(tail, wantTail) {
		t.Errorf("scaled down: store/1 detaching hooks %v; want %v", tail, wantTail)
	}
	names := hookWords(log)
	if n := len(names); n < 2 || names[n-2] != "stop" || names[n-1] != "remove" {
		t.Errorf("scaled down: store/1 hooks end %v; want stop, remove last", names)
	}
	if !regexp.MustCompile(`(?m)^still-there attached data/2$`).MatchString(strings.Join(log, "\n")) {
		t.Errorf("scaled down: store/1's data-storage-detaching did not read its data:\n%s", strings.Join(log, "\n"))
	}
	if _, err := os.Stat(filepath.Join(r.data, "agent", "storage", "store-1")); !os.IsNotExist(err) {
		t.Errorf("scaled down: store/1's storage directory is still there: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(r.dir("store/0", "data/0"), "install.txt")); len(b) == 0 {
		t.Errorf("scaled down: store/0 lost its data")
	}
}

// TestStorageOpsCharm runs testdata/ops/ops-store, written with the real
// ops framework: self.model.storages and the storage events' locations
// work through storage-list and storage-get, and its data outlives an
// agent restart and an upgrade, then goes with the unit.
func TestStorageOpsCharm(t *testing.T) {
	t.Parallel()
	fw := opsFrameworkDir()
	if fw == "" {
		t.Skip("Canonical's ops framework is not beside the checkout (../shared/thirdparty/python-ops): the ops charms cannot run")
	}
	if out, err := exec.Command("/usr/bin/python3", "-c", "import yaml, websocket").CombinedOutput(); err != nil {
		t.Fatalf("/usr/bin/python3 cannot import what ops needs (apt-get install python3-yaml python3-websocket, as .ci/run does): %v\n%s", err, out)
	}
	charms := t.TempDir()
	charm := packOps(t, fw, "ops-store", filepath.Join(charms, "ops-store"))
	r := &storageRun{data: t.TempDir(), envs: t.TempDir()}
	env := func(name, dir string, units int) string {
		body := fmt.Sprintf("apiVersion: \"fixpoint/v1\"\nname: \"opsstores\"\nservices: \"ops-store\": {charm: %q, units: %d}\n", dir, units)
		path := filepath.Join(r.envs, name+".cue")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	events := func(unit string) []string {
		b, _ := os.ReadFile(filepath.Join(r.data, "agent", "units", strings.ReplaceAll(unit, "/", "-"), "charm", "events.log"))
		return strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	r.up = startUp(t, r.data, env("deploy", charm, 2))
	st := r.up.waitConverged(t, 25*time.Minute)

	want := map[string]string{"ops-store/0": "data/0", "ops-store/1": "data/1"}
	for unit, id := range want {
		if u := st.Units[unit]; u.Phase != "settled" || u.Status.Message != "data at "+r.dir(unit, id) {
			t.Errorf("deploy: %s is %s, status %+v: %s", unit, u.Phase, u.Status, u.Error)
		}
		ev := events(unit)
		if len(ev) < 2 || ev[0] != "data-storage-attached "+id+" "+r.dir(unit, id) || ev[1] != "install" {
			t.Errorf("deploy: %s events %v; want data-storage-attached %s at its directory, then install", unit, ev, id)
		}
	}

	r.up.kill()
	r.up = startUp(t, r.data, env("deploy", charm, 2))
	r.up.waitConverged(t, 25*time.Minute)
	upgraded := packOps(t, fw, "ops-store", filepath.Join(charms, "ops-store-2"))
	if err := os.WriteFile(filepath.Join(upgraded, "VERSION"), []byte("2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.apply(t, env("upgrade", upgraded, 2))
	for unit, id := range want {
		if b, _ := os.ReadFile(filepath.Join(r.dir(unit, id), "install.txt")); string(b) != "written at install by "+unit+"\n" {
			t.Errorf("restarted and upgraded: %s install.txt = %q", unit, b)
		}
		if ev := events(unit); !slices.Contains(ev, "upgrade-charm") || countLine(ev, "install") != 1 {
			t.Errorf("restarted and upgraded: %s events %v; want one install and an upgrade-charm", unit, ev)
		}
	}

	r.apply(t, env("down", upgraded, 1))
	ev := events("ops-store/1")
	if n := len(ev); n < 3 || ev[n-3] != "data-storage-detaching data/1 written at install by ops-store/1" || ev[n-2] != "stop" || ev[n-1] != "remove" {
		t.Errorf("scaled down: ops-store/1 events end %v; want data-storage-detaching (reading its data), stop, remove", ev)
	}
	if _, err := os.Stat(filepath.Join(r.data, "agent", "storage", "ops-store-1")); !os.IsNotExist(err) {
		t.Errorf("scaled down: ops-store/1's storage directory is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(r.dir("ops-store/0", "data/0"), "install.txt")); err != nil {
		t.Errorf("scaled down: ops-store/0 lost its data: %v", err)
	}
}

// TestStorageInAnAction: an action runs with its unit's storage as a hook
// does. It has no JUJU_STORAGE_ID, so storage-list finds the instance and
// storage-get -s ID its directory, where install's file is: in a classic
// charm's action script and through ops's model (when the ops framework
// is beside the checkout).
func TestStorageInAnAction(t *testing.T) {
	t.Parallel()
	classic, err := filepath.Abs(repo("testdata", "storage", "classic-store"))
	if err != nil {
		t.Fatal(err)
	}
	r := &storageRun{data: t.TempDir(), envs: t.TempDir()}
	body := fmt.Sprintf("apiVersion: \"fixpoint/v1\"\nname: \"stores\"\nservices: {\n\tstore: {charm: %q, units: 1, storage: logs: count: 0}\n", classic)
	units := []string{"store/0"}
	if fw := opsFrameworkDir(); fw != "" {
		if out, err := exec.Command("/usr/bin/python3", "-c", "import yaml, websocket").CombinedOutput(); err != nil {
			t.Fatalf("/usr/bin/python3 cannot import what ops needs (apt-get install python3-yaml python3-websocket, as .ci/run does): %v\n%s", err, out)
		}
		ops := packOps(t, fw, "ops-store", filepath.Join(t.TempDir(), "ops-store"))
		body += fmt.Sprintf("\t\"ops-store\": {charm: %q, units: 1}\n", ops)
		units = append(units, "ops-store/0")
	} else {
		t.Log("Canonical's ops framework is not beside the checkout (../shared/thirdparty/python-ops): only the classic charm's action runs")
	}
	body += "}\n"
	env := filepath.Join(r.envs, "actions.cue")
	if err := os.WriteFile(env, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	r.up = startUp(t, r.data, env)
	r.up.waitConverged(t, 25*time.Minute)
	cli := upCLI(t, r.data)
	for _, unit := range units {
		// Instances are numbered in one sequence across services.
		got := r.unitStorage(t, unit)
		if len(got) != 1 || !strings.HasPrefix(got[0], "data/") {
			t.Fatalf("%s storage %v; want one data instance", unit, got)
		}
		id := got[0]
		op, _ := runOp(t, cli, 0, "run", unit, "where")
		want := map[string]any{"id": id, "location": r.dir(unit, id), "install": "written at install by " + unit}
		for k, v := range want {
			if op.Results[k] != v {
				t.Errorf("%s where: %s = %v, want %v (results %v, message %q)", unit, k, op.Results[k], v, op.Results, op.Message)
			}
		}
	}
}

// TestVetStorageCount checks that vet refuses a storage count outside the
// charm's range at its line in the environment file.
func TestVetStorageCount(t *testing.T) {
	t.Parallel()
	charm, err := filepath.Abs(repo("testdata", "storage", "classic-store"))
	if err != nil {
		t.Fatal(err)
	}
	env := filepath.Join(t.TempDir(), "env.cue")
	body := fmt.Sprintf("apiVersion: \"fixpoint/v1\"\nservices: store: {\n\tcharm: %q\n\tstorage: logs: count: 7\n}\n", charm)
	if err := os.WriteFile(env, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	r := fixpoint(t, time.Minute, "vet", "-f", env)
	if r.code == 0 || !strings.Contains(r.stdout+r.stderr, "env.cue:4:") || !strings.Contains(r.stdout+r.stderr, "count 7 is outside the charm's range 0-3") {
		t.Errorf("vet exited %d:\n%s%s\nwant the count refused at env.cue:4", r.code, r.stdout, r.stderr)
	}
}
