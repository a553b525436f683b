package legacy

import (
	"reflect"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/charmapi"
)

// TestPortsScopedToEndpoints: Juju 3's open-port --endpoints opens a port
// for those endpoints alone, opened-ports --endpoints lists them as Juju
// prints them, close-port closes it for the endpoints named or, without
// them, for all; the result keeps each scoped port as PORT@ENDPOINT.
func TestPortsScopedToEndpoints(t *testing.T) {
	s, err := newSession(testUniverse(), nil, []string{"80/tcp", "8080/tcp@website", "8080/tcp@db"}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	s.begin("ctx", charmapi.Event{Hook: "config-changed"})
	list := func(args ...string) string { return runTool(t, s, "opened-ports", append(args, "--format=json")...) }
	if got := list("--endpoints"); got != `["80/tcp (*)","8080/tcp (db, website)"]`+"\n" {
		t.Errorf("opened-ports --endpoints = %s", got)
	}
	runTool(t, s, "open-port", "--endpoints", "cluster,db", "7766")
	runTool(t, s, "open-port", "80/tcp", "--endpoints", "db")
	if got := list(); got != `["80/tcp","7766/tcp","8080/tcp"]`+"\n" {
		t.Errorf("opened-ports = %s; want each port once", got)
	}
	if got := list("--endpoints"); got != `["80/tcp (*)","7766/tcp (cluster, db)","8080/tcp (db, website)"]`+"\n" {
		t.Errorf("opened-ports --endpoints = %s", got)
	}
	runTool(t, s, "close-port", "7766/tcp", "--endpoints", "db")
	runTool(t, s, "close-port", "8080/tcp")
	if got := list("--endpoints"); got != `["80/tcp (*)","7766/tcp (cluster)"]`+"\n" {
		t.Errorf("after closing: opened-ports --endpoints = %s", got)
	}
	if got := s.result().Ports; !reflect.DeepEqual(got, []string{"80/tcp", "80/tcp@db", "7766/tcp@cluster"}) {
		t.Errorf("result ports = %q", got)
	}
	for _, args := range [][]string{{"--endpoints", "Bad!", "80"}, {"--endpoints", "db", "80/sctp"}} {
		if r := s.call(&request{Context: "ctx", Tool: "open-port", Args: args}); r.Code != exitUsage {
			t.Errorf("open-port %v: %+v; want a usage error", args, r)
		}
	}
}

// TestHookcmdsPortsEndpointScoped is test_hookcmds.py's
// test_ports_endpoint_scoped and test_ports_open_close_cycle, with
// canonical/operator's charm.
func TestHookcmdsPortsEndpointScoped(t *testing.T) {
	charm := conformanceCharm(t, "test_hookcmds")
	out := runHookcmdsAction(t, charm, hookcmdsUniverse(), "test-ports-endpoint-scoped", map[string]any{"port": 7766.0})
	for _, k := range []string{"port-found-with-endpoint", "endpoint-matches", "closed-after"} {
		if out.Results[k] != "true" {
			t.Errorf("%s = %v (endpoints-list %v)", k, out.Results[k], out.Results["endpoints-list"])
		}
	}
	out = runHookcmdsAction(t, charm, hookcmdsUniverse(), "test-ports", map[string]any{"port": 9988.0})
	var before, tcp, both, final []map[string]any
	jsonResult(t, out, "before", &before)
	jsonResult(t, out, "after-open-tcp", &tcp)
	jsonResult(t, out, "after-open-both", &both)
	jsonResult(t, out, "final", &final)
	if len(tcp) != len(before)+1 || len(both) != len(before)+2 || len(final) != len(before) {
		t.Errorf("ports before %v, after tcp %v, after both %v, final %v", before, tcp, both, final)
	}
}
