package juju

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
	"github.com/fixpoint/fixpoint/model"
)

// testSource is an environment of three services on two machines: web (2
// units, m1 and m2, m2's agent lost) related to db (1 unit in error, whose
// leader set an application status) and a subordinate, logs, on web's
// units.
func testSource(t *testing.T) *Source {
	t.Helper()
	st := model.NewState()
	st.Name = "shop"
	st.Charms["hw"] = &model.Charm{Hash: "hw", Meta: model.CharmMeta{Name: "web-charm"}}
	st.Charms["hd"] = &model.Charm{Hash: "hd", Meta: model.CharmMeta{Name: "db-charm"}}
	st.Charms["hl"] = &model.Charm{Hash: "hl", Meta: model.CharmMeta{Name: "logs-charm", Subordinate: true}}
	st.Services["web"] = &model.Service{Name: "web", Charm: "hw", Units: 2, Life: model.Alive, Leader: "web/0"}
	st.Services["db"] = &model.Service{Name: "db", Charm: "hd", Units: 1, Life: model.Alive, Leader: "db/0"}
	st.Services["logs"] = &model.Service{Name: "logs", Charm: "hl", Life: model.Alive, Subordinate: true, Leader: "logs/0"}
	st.Machines["m1"] = &model.Machine{Name: "m1", Address: "10.0.0.1", ID: "0"}
	st.Machines["m2"] = &model.Machine{Name: "m2", Address: "10.0.0.2", ID: "1", Lost: true}
	unit := func(name, svc, machine, principal string, status model.Status, ports ...string) {
		st.Units[name] = &model.Unit{Name: name, Service: svc, Machine: machine, Principal: principal, Life: model.Alive, Status: status, Ports: ports, Reconciles: 1}
	}
	unit("web/0", "web", "m1", "", model.Status{State: "active", Message: "serving"}, "80/tcp", "80/tcp"+model.PortEndpointSep+"website", "443/tcp")
	unit("web/1", "web", "m2", "", model.Status{State: "active"})
	unit("db/0", "db", "m1", "", model.Status{State: "maintenance", Message: "migrating"})
	unit("logs/0", "logs", "m1", "web/0", model.Status{State: "active", Message: "shipping"})
	unit("logs/1", "logs", "m2", "web/1", model.Status{State: "blocked", Message: "no sink"})
	st.Units["db/0"].State = map[string]string{model.StateAppStatus: `{"state":"waiting","message":"db says wait"}`}
	st.Relations[1] = &model.Relation{ID: 1, Interface: "pg", Scope: model.Global, Life: model.Alive, Endpoints: []model.RelEndpoint{
		{Service: "web", Name: "db", Role: model.Requires, Interface: "pg"}, {Service: "db", Name: "db", Role: model.Provides, Interface: "pg"}}}
	st.Relations[2] = &model.Relation{ID: 2, Interface: "juju-info", Scope: model.Container, Life: model.Alive, Endpoints: []model.RelEndpoint{
		{Service: "web", Name: "juju-info", Role: model.Provides, Interface: "juju-info"}, {Service: "logs", Name: "juju-info", Role: model.Requires, Interface: "juju-info", Scope: model.Container}}}
	since := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	line := func(name string, phase string) *engine.UnitStatus {
		u := st.Units[name]
		return &engine.UnitStatus{Service: u.Service, Machine: u.Machine, Life: "alive", Phase: phase, Status: u.Status,
			Leader: st.Services[u.Service].Leader == name, Reconciles: 1, Since: since}
	}
	fs := &engine.Status{Environment: "shop", Units: map[string]*engine.UnitStatus{}, Services: map[string]*engine.ServiceStatus{
		"web": {Charm: "hw"}, "db": {Charm: "hd", Status: &model.Status{State: "waiting", Message: "db says wait"}, Version: "14.2"}, "logs": {Charm: "hl"},
	}}
	for _, n := range []string{"web/0", "logs/0", "logs/1"} {
		fs.Units[n] = line(n, engine.Settled)
	}
	fs.Units["web/1"] = line("web/1", engine.Settled)
	fs.Units["web/1"].Agent = "lost"
	fs.Units["db/0"] = line("db/0", engine.Error)
	fs.Units["db/0"].Error = `hook "install" exited 1`
	return &Source{State: st, Status: fs, Controller: "prod", Now: since, Loc: time.UTC}
}

func TestFullStatusShape(t *testing.T) {
	s := FullStatus(testSource(t))
	if s.Model.Name != "shop" || s.Model.Type != "iaas" || s.Model.Controller != "prod" || s.Model.Version != Version || s.Model.ModelStatus.Current != "available" {
		t.Errorf("model %+v", s.Model)
	}
	// Machines are keyed by their Juju ids; a lost agent's machine is down.
	if len(s.Machines) != 2 || s.Machines["0"].Hostname != "m1" || s.Machines["0"].DNSName != "10.0.0.1" || s.Machines["0"].JujuStatus.Current != "started" {
		t.Errorf("machines %+v", s.Machines)
	}
	if s.Machines["1"].JujuStatus.Current != "down" {
		t.Errorf("machine 1 (lost): %+v", s.Machines["1"])
	}
	web := s.Applications["web"]
	if web.Charm != "local:web-charm-0" || web.CharmName != "web-charm" || web.CharmOrigin != "local" || web.CharmRev != 0 || web.Exposed {
		t.Errorf("web's charm: %+v", web)
	}
	// A service deployed from a channel shows it and its revision, as a
	// Charmhub charm; an exposed one says so.
	chsrc := testSource(t)
	rev := 67
	chsrc.State.Document = &model.Environment{Services: map[string]model.ServiceSpec{"db": {Charm: "db-charm", Channel: "latest/beta", Revision: &rev}}}
	chsrc.State.Services["db"].Exposed = true
	fromChannel := FullStatus(chsrc).Applications["db"]
	if fromChannel.Charm != "db-charm" || fromChannel.CharmOrigin != "charmhub" || fromChannel.CharmChannel != "latest/beta" || fromChannel.CharmRev != 67 || !fromChannel.Exposed {
		t.Errorf("db from a channel, exposed: %+v", fromChannel)
	}
	w0 := web.Units["web/0"]
	if !w0.Leader || w0.Machine != "0" || w0.PublicAddress != "10.0.0.1" || w0.WorkloadStatus.Current != "active" || w0.WorkloadStatus.Message != "serving" ||
		w0.JujuStatus.Current != "idle" || w0.WorkloadStatus.Since != "02 Jan 2026 03:04:05Z" {
		t.Errorf("web/0 %+v", w0)
	}
	// Ports a charm opened for chosen endpoints are listed once.
	if !reflect.DeepEqual(w0.OpenPorts, []string{"80/tcp", "443/tcp"}) {
		t.Errorf("web/0 ports %v", w0.OpenPorts)
	}
	if w1 := web.Units["web/1"]; w1.Leader || w1.JujuStatus.Current != "lost" || w1.Machine != "1" {
		t.Errorf("web/1 (lost agent) %+v", w1)
	}
	// Subordinate units sit under their principals, not in their
	// application's units; the subordinate application names its
	// principals.
	if sub := w0.Subordinates["logs/0"]; sub.WorkloadStatus.Current != "active" || sub.Machine != "" || !sub.Leader {
		t.Errorf("web/0's subordinates %+v", w0.Subordinates)
	}
	logs := s.Applications["logs"]
	if len(logs.Units) != 0 || !reflect.DeepEqual(logs.SubordinateTo, []string{"web"}) {
		t.Errorf("logs: units %v, subordinate-to %v", logs.Units, logs.SubordinateTo)
	}
	// No status set by logs' leader: the most severe of its units'.
	if logs.Status.Current != "blocked" || logs.Status.Message != "no sink" {
		t.Errorf("logs' derived status %+v", logs.Status)
	}
	// db's unit is in error: the workload shows the failure, the agent
	// idle; the leader's application status stands.
	db := s.Applications["db"]
	if u := db.Units["db/0"]; u.WorkloadStatus.Current != "error" || !strings.Contains(u.WorkloadStatus.Message, "install") || u.JujuStatus.Current != "idle" {
		t.Errorf("db/0 in error: %+v", u)
	}
	if db.Status.Current != "waiting" || db.Status.Message != "db says wait" || db.Version != "14.2" {
		t.Errorf("db's application status %+v, version %q", db.Status, db.Version)
	}
	wantRel := map[string][]ApplicationRelation{
		"db":        {{RelatedApplication: "db", Interface: "pg", Scope: "global"}},
		"juju-info": {{RelatedApplication: "logs", Interface: "juju-info", Scope: "container"}},
	}
	if !reflect.DeepEqual(web.Relations, wantRel) {
		t.Errorf("web's relations %+v", web.Relations)
	}
}

// The JSON carries the keys jubilant's Status._from_dict reads, with
// Juju's names, and none of Go's.
func TestFullStatusJSONKeys(t *testing.T) {
	b, err := json.Marshal(FullStatus(testSource(t)))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	app := m["applications"].(map[string]any)["web"].(map[string]any)
	for _, k := range []string{"charm", "charm-origin", "charm-name", "charm-rev", "exposed", "application-status", "relations", "units"} {
		if _, ok := app[k]; !ok {
			t.Errorf("application lacks %q: %s", k, b)
		}
	}
	unit := app["units"].(map[string]any)["web/0"].(map[string]any)
	for _, k := range []string{"workload-status", "juju-status", "leader", "machine", "public-address", "open-ports", "subordinates"} {
		if _, ok := unit[k]; !ok {
			t.Errorf("unit lacks %q: %v", k, unit)
		}
	}
	for _, k := range []string{"name", "type", "controller", "cloud", "version"} {
		if _, ok := m["model"].(map[string]any)[k]; !ok {
			t.Errorf("model lacks %q", k)
		}
	}
}

func TestDeriveStatus(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{nil, "unknown"},
		{[]string{"active", "waiting"}, "waiting"},
		{[]string{"waiting", "maintenance", "active"}, "maintenance"},
		{[]string{"blocked", "error", "active"}, "error"},
		{[]string{"unknown", "active"}, "active"},
	} {
		var units []StatusInfo
		for i, s := range c.in {
			units = append(units, StatusInfo{Current: s, Message: strings.Repeat("x", i)})
		}
		if got := DeriveStatus(units); got.Current != c.want {
			t.Errorf("DeriveStatus(%v) = %v, want %s", c.in, got, c.want)
		}
	}
	// The first of equals is kept, its message with it.
	if got := DeriveStatus([]StatusInfo{{Current: "blocked", Message: "a"}, {Current: "blocked", Message: "b"}}); got.Message != "a" {
		t.Errorf("first of equals: %+v", got)
	}
}

func TestUnitStatusesBeforeAMachine(t *testing.T) {
	u := &model.Unit{Name: "web/2", Service: "web", Life: model.Alive}
	w, a := UnitStatuses(u, &engine.UnitStatus{Phase: engine.Pending, Reason: "no machine"}, time.UTC)
	if w.Current != "waiting" || w.Message != "waiting for machine" || a.Current != "allocating" {
		t.Errorf("a unit without a machine: workload %+v, agent %+v", w, a)
	}
	u.Machine = "m1"
	w, a = UnitStatuses(u, &engine.UnitStatus{Machine: "m1", Phase: engine.Reconciling, Reconciles: 0}, time.UTC)
	if w.Current != "waiting" || w.Message != "agent initialising" || a.Current != "executing" {
		t.Errorf("a unit running its first hook: workload %+v, agent %+v", w, a)
	}
	w, _ = UnitStatuses(u, &engine.UnitStatus{Machine: "m1", Phase: engine.Settled, Reconciles: 3}, time.UTC)
	if w.Current != "unknown" {
		t.Errorf("a unit that set no status after its hooks ran: %+v", w)
	}
	u.Life = model.Dying
	w, a = UnitStatuses(u, &engine.UnitStatus{Machine: "m1", Phase: engine.Settled, Reconciles: 3, Status: model.Status{State: "active"}}, time.UTC)
	if w.Life != "dying" || a.Life != "dying" {
		t.Errorf("a dying unit: %+v %+v", w, a)
	}
}
