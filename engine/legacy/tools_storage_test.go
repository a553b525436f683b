package legacy

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/charmapi"
)

// storageUniverse is a unit with one data and two logs instances.
func storageUniverse() *charmapi.Universe {
	u := testUniverse()
	u.Storage = []charmapi.Storage{
		{ID: "data/0", Name: "data", Kind: "filesystem", Location: "/var/lib/fixpoint/agent/storage/web-0/data/0"},
		{ID: "logs/1", Name: "logs", Kind: "filesystem", Location: "/var/lib/fixpoint/agent/storage/web-0/logs/1"},
		{ID: "logs/4", Name: "logs", Kind: "filesystem", Location: "/var/lib/fixpoint/agent/storage/web-0/logs/4"},
	}
	return u
}

// storeCharm is a charm declaring the stores data and logs.
var storeCharm = filepath.Join("..", "..", "testdata", "storage", "classic-store")

// callStorage is callIn in a session of storeCharm.
func callStorage(t *testing.T, e charmapi.Event, tool string, args ...string) response {
	t.Helper()
	s, err := newSession(storageUniverse(), nil, nil, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	s.in.charmDir = storeCharm
	s.begin("ctx", e)
	r := s.call(&request{Context: "ctx", Tool: tool, Args: args})
	r.Keep, r.Gen = 0, 0
	return r
}

// TestStorageTools pins storage-get, storage-list and storage-add's
// output, exit codes and messages to Juju's (jujuc storage-*.go).
func TestStorageTools(t *testing.T) {
	attached := charmapi.Event{Hook: "logs-storage-attached", Storage: "logs/4"}
	install := charmapi.Event{Hook: "install"}
	for _, c := range []toolCase{
		{name: "get defaults to the hook's instance", e: attached, tool: "storage-get", args: []string{"location"}, stdout: "/var/lib/fixpoint/agent/storage/web-0/logs/4\n"},
		{name: "get all keys yaml", e: attached, tool: "storage-get", stdout: "kind: filesystem\nlocation: /var/lib/fixpoint/agent/storage/web-0/logs/4\n"},
		{name: "get -s json", e: install, tool: "storage-get", args: []string{"-s", "data/0", "--format=json"},
			stdout: `{"kind":"filesystem","location":"/var/lib/fixpoint/agent/storage/web-0/data/0"}` + "\n"},
		{name: "get -s kind", e: install, tool: "storage-get", args: []string{"-s", "data/0", "kind"}, stdout: "filesystem\n"},
		{name: "get outside a storage hook needs -s", e: install, tool: "storage-get", code: 2, stderr: "ERROR no storage instance specified\n"},
		{name: "get unknown id", e: install, tool: "storage-get", args: []string{"-s", "data/9"}, code: 2,
			stderr: "ERROR invalid value \"data/9\" for option -s: storage data/9 not found\n"},
		{name: "get malformed id", e: install, tool: "storage-get", args: []string{"-s", "data"}, code: 2,
			stderr: "ERROR invalid value \"data\" for option -s: invalid storage ID \"data\"\n"},
		{name: "get unknown key", e: attached, tool: "storage-get", args: []string{"size"}, code: 1, stderr: "ERROR invalid storage attribute \"size\"\n"},
		{name: "get two keys", e: attached, tool: "storage-get", args: []string{"kind", "location"}, code: 2, stderr: "ERROR unrecognized args: [\"location\"]\n"},
		{name: "list all", e: install, tool: "storage-list", stdout: "data/0\nlogs/1\nlogs/4\n"},
		{name: "list by name json", e: install, tool: "storage-list", args: []string{"logs", "--format", "json"}, stdout: `["logs/1","logs/4"]` + "\n"},
		{name: "list unknown name is empty", e: install, tool: "storage-list", args: []string{"--format=json", "cache"}, stdout: "[]\n"},
		{name: "add", e: install, tool: "storage-add", args: []string{"logs=2", "data"}},
		{name: "add nothing", e: install, tool: "storage-add", code: 2, stderr: "ERROR storage add requires a storage directive\n"},
		{name: "add pool", e: install, tool: "storage-add", args: []string{"logs=ebs,2"}, code: 2, stderr: "ERROR only count can be specified for \"logs\"\n"},
		{name: "add zero", e: install, tool: "storage-add", args: []string{"logs=0"}, code: 2,
			stderr: "ERROR cannot parse storage directive \"logs=0\": count must be greater than zero\n"},
		{name: "add a store the charm does not declare", e: install, tool: "storage-add", args: []string{"logs", "nosuch=1"}, code: 1,
			stderr: "ERROR adding \"nosuch\" storage to web/0: charm storage \"nosuch\" not found\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := callStorage(t, c.e, c.tool, c.args...)
			if r.Code != c.code || r.Stdout != c.stdout || r.Stderr != c.stderr {
				t.Errorf("%s %v:\ncode %d stdout %q stderr %q\nwant %d %q %q", c.tool, c.args, r.Code, r.Stdout, r.Stderr, c.code, c.stdout, c.stderr)
			}
		})
	}
}

// TestStorageAddGoesIntoTheResult checks that storage-add calls add up in
// the result, bounded per hook run, and that a refused call adds nothing.
func TestStorageAddGoesIntoTheResult(t *testing.T) {
	s, err := newSession(storageUniverse(), nil, nil, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	s.in.charmDir = storeCharm
	s.begin("ctx", charmapi.Event{Hook: "config-changed"})
	for _, args := range [][]string{{"logs"}, {"logs=2", "data=1"}, {"logs=40"}, {"logs", "nosuch"}} {
		s.call(&request{Context: "ctx", Tool: "storage-add", Args: args})
	}
	got := s.result().StorageAdd
	if len(got) != 2 || got["logs"] != 3 || got["data"] != 1 {
		t.Errorf("result storage_add %v; want logs 3, data 1 (logs=40 and the call naming nosuch refused)", got)
	}
}

// TestStorageHookEnv checks Juju's variables for a storage hook, and
// none for another.
func TestStorageHookEnv(t *testing.T) {
	u := storageUniverse()
	r := &runEnv{storage: u.Storage}
	env := r.hookEnv(charmapi.Event{Hook: "logs-storage-attached", Storage: "logs/1"}, "ctx")
	for _, want := range []string{"JUJU_STORAGE_ID=logs/1", "JUJU_STORAGE_LOCATION=/var/lib/fixpoint/agent/storage/web-0/logs/1", "JUJU_STORAGE_KIND=filesystem"} {
		if !slices.Contains(env, want) {
			t.Errorf("storage hook env lacks %s: %v", want, env)
		}
	}
	for _, kv := range r.hookEnv(charmapi.Event{Hook: "install"}, "ctx") {
		if len(kv) > 12 && kv[:12] == "JUJU_STORAGE" {
			t.Errorf("install's env has %s", kv)
		}
	}
}
