package model

import (
	"fmt"
	"strings"
	"testing"
)

const (
	digestA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	digestB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// resourceCharms is charms() with web declaring two file resources.
func resourceCharms() map[string]*Charm {
	cs := charms()
	web := *cs["h-web"]
	web.Meta.Resources = map[string]Resource{"software": {Type: ResourceFile, Filename: "app.tgz"}, "seed_data": {Type: ResourceFile}}
	cs["h-web"] = &web
	return cs
}

// resourceDeploy is env() with web given resources (name → digest).
func resourceDeploy(res map[string]string) *Command {
	e := env(nil)
	web := e.Services["web"]
	web.Resources, web.ResourceDigests = map[string]string{}, map[string]string{}
	for n, d := range res {
		web.Resources[n] = "./files/" + n
		web.ResourceDigests[n] = d
	}
	e.Services["web"] = web
	return &Command{Op: OpDeploy, Deploy: &Deploy{Env: *e, Charms: resourceCharms()}}
}

// TestResourceAdmission: a deploy names only resources its charm
// declares, each with a sha256 digest, at most MaxResources; a charm's
// resources have valid names, type file and a plain file name. A refused
// command says where and changes nothing.
func TestResourceAdmission(t *testing.T) {
	if _, err := resourceDeploy(map[string]string{"software": digestA}).Check(); err != nil {
		t.Fatalf("a declared resource with a digest: %v", err)
	}
	for _, tt := range []struct {
		name string
		cmd  *Command
		want string
	}{
		{"undeclared", resourceDeploy(map[string]string{"sofware": digestA}), `services.web.resources.sofware: charm web declares no resource "sofware" (it declares: seed_data, software)`},
		{"no digest", resourceDeploy(map[string]string{"software": ""}), "services.web.resources.software: resource software has no content digest"},
		{"not a digest", resourceDeploy(map[string]string{"software": "../../etc/passwd"}), "services.web.resources.software: resource software has no content digest"},
		{"bad name", resourceDeploy(map[string]string{"Soft ware": digestA}), `services.web.resources.Soft ware: resource name "Soft ware" is invalid`},
	} {
		_, err := tt.cmd.Check()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v; want %q", tt.name, err, tt.want)
		}
	}
	many := map[string]string{}
	for i := 0; i <= MaxResources; i++ {
		many[fmt.Sprintf("r%d", i)] = digestA
	}
	if _, err := resourceDeploy(many).Check(); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("a service takes at most %d", MaxResources)) {
		t.Errorf("%d resources: err = %v", len(many), err)
	}
	digestOnly := resourceDeploy(map[string]string{"software": digestA})
	digestOnly.Deploy.Env.Services["web"].ResourceDigests["seed_data"] = digestB
	if _, err := digestOnly.Check(); err == nil || !strings.Contains(err.Error(), `a digest for resource "seed_data", which names no file`) {
		t.Errorf("a digest without a file: err = %v", err)
	}

	for _, tt := range []struct {
		name string
		res  map[string]Resource
		want string
	}{
		{"oci image", map[string]Resource{"img": {Type: "oci-image"}}, `resource "img" has type "oci-image"; fixpoint provides resources of type file only`},
		{"path filename", map[string]Resource{"sw": {Type: ResourceFile, Filename: "../x"}}, `resource "sw": filename "../x" is not a file name`},
		{"dot filename", map[string]Resource{"sw": {Type: ResourceFile, Filename: ".."}}, `filename ".." is not a file name`},
		{"bad name", map[string]Resource{"-sw": {Type: ResourceFile}}, `resource name "-sw" is invalid`},
	} {
		m := CharmMeta{Name: "web", Resources: tt.res}
		if err := m.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v; want %q", tt.name, err, tt.want)
		}
	}
	m := CharmMeta{Name: "web", Resources: map[string]Resource{}}
	for i := 0; i <= MaxResources; i++ {
		m.Resources[fmt.Sprintf("r%d", i)] = Resource{Type: ResourceFile}
	}
	if err := m.Validate(); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("the limit is %d", MaxResources)) {
		t.Errorf("a charm with %d resources: err = %v", len(m.Resources), err)
	}

	s := NewState()
	apply(t, s, 1, resourceDeploy(map[string]string{"software": digestA}))
	before := stateJSON(t, s)
	if _, err := s.Apply(2, resourceDeploy(map[string]string{"sofware": digestA})); err == nil {
		t.Fatal("the FSM applied a deploy of an undeclared resource")
	}
	if stateJSON(t, s) != before {
		t.Error("a refused deploy changed the state")
	}
}

// TestResourceChangePlannedAndApplied: a deploy that changes a resource's
// digest plans one resource change per name, and applying it records the
// new digests on the service; units see them in their Seen token, which
// moves only when a digest does.
func TestResourceChangePlannedAndApplied(t *testing.T) {
	s := NewState()
	first := resourceDeploy(map[string]string{"software": digestA})
	desired, err := first.Check()
	if err != nil {
		t.Fatal(err)
	}
	var added []string
	for _, c := range Plan(s, desired) {
		if c.Service == "web" {
			added = append(added, c.String())
		}
	}
	if want := "+ service web (charm h-web)\n~ service web resource software (none) -> aaaaaaaaaaaa\n+ units web/0, web/1"; strings.Join(added, "\n") != want {
		t.Errorf("plan of a new service with a resource:\n%s\nwant:\n%s", strings.Join(added, "\n"), want)
	}
	apply(t, s, 1, first)
	if got := s.Services["web"].Resources; got["software"] != digestA || len(got) != 1 {
		t.Fatalf("web's resources after the first deploy: %v", got)
	}
	if s.Services["db"].Resources != nil {
		t.Errorf("db has resources %v", s.Services["db"].Resources)
	}
	next := resourceDeploy(map[string]string{"software": digestB, "seed_data": digestA})
	desired, err = next.Check()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range Plan(s, desired) {
		got = append(got, c.String())
	}
	want := []string{"~ service web resource seed_data (none) -> aaaaaaaaaaaa", "~ service web resource software aaaaaaaaaaaa -> bbbbbbbbbbbb"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("plan:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	tok := ResourcesToken(s.Services["web"].Resources)
	apply(t, s, 2, next)
	if got := s.Services["web"].Resources; got["software"] != digestB || got["seed_data"] != digestA {
		t.Fatalf("web's resources after the change: %v", got)
	}
	if ResourcesToken(s.Services["web"].Resources) == tok || tok == "" || ResourcesToken(nil) != "" {
		t.Error("the resources token did not move with a digest, or is set for none")
	}
	if ResourcesToken(map[string]string{"a": digestA, "b": digestB}) != ResourcesToken(map[string]string{"b": digestB, "a": digestA}) {
		t.Error("the token depends on map order")
	}
	if !s.HasResource(digestB) || s.HasResource(strings.Repeat("c", 64)) {
		t.Error("HasResource disagrees with the services' digests")
	}
}

// TestClusterUsesResourceInEveryEnvironment: an agent may fetch a
// resource that a unit on its machine uses in an environment other than
// the default, and not one only another machine's units use.
func TestClusterUsesResourceInEveryEnvironment(t *testing.T) {
	cl := NewCluster()
	capply(t, cl, 1, envAdd("staging", uuidA))
	d := resourceDeploy(map[string]string{"software": digestA})
	d.Env = "staging"
	d.Deploy.Env.Name = "staging"
	capply(t, cl, 2, d)
	capply(t, cl, 3, &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "m1", Address: "10.0.0.1", Number: true}})
	st := cl.Envs["staging"].State
	var on string
	for _, u := range st.Units {
		if u.Service == "web" {
			on = u.Machine
		}
	}
	if on != "m1" {
		t.Fatalf("staging's web units are on %q; want m1", on)
	}
	if cl.Default.UsesResource("m1", digestA) {
		t.Fatal("the default environment uses staging's resource")
	}
	if !cl.UsesResource("m1", digestA) {
		t.Error("m1 runs staging's web, which uses the resource, but may not fetch it")
	}
	if cl.UsesResource("m1", digestB) || cl.UsesResource("m2", digestA) {
		t.Error("a resource no unit on the machine uses is allowed")
	}
}
