package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine"
)

// toolsCharm is a classic charm whose hooks use the Juju hook tools of
// issue 42: charm state, endpoint-scoped ports, Juju's machine id,
// credential-get of a trusted service, network-get's interface, and
// juju-reboot.
var toolsCharm = map[string]string{
	"metadata.yaml": "name: tools\nsummary: Juju hook tools\ndescription: exercises state, ports, credential, network and reboot tools\nprovides:\n  website:\n    interface: http\n",
	"config.yaml":   "options:\n  reboot:\n    type: string\n    default: \"\"\n",
	"hooks/install": `state-set installed-on="$JUJU_MACHINE_ID"
open-port --endpoints website 8080`,
	"hooks/config-changed": `echo "config-changed $(state-get installed-on)" >> "$CHARM_DIR/hooks.log"
if [ "$(config-get reboot)" = yes ] && [ ! -e "$CHARM_DIR/rebooted" ]; then
	touch "$CHARM_DIR/rebooted"
	juju-reboot
fi`,
	"hooks/start": `echo "start $JUJU_MACHINE_ID" >> "$CHARM_DIR/hooks.log"
credential-get --format=json > "$CHARM_DIR/credential.json"
network-get website --format=json > "$CHARM_DIR/network.json"`,
	"hooks/stop": `echo stop >> "$CHARM_DIR/hooks.log"`,
}

// TestJujuHookToolsEndToEnd runs the tools charm through `fixpoint up` and
// `apply`: what its hooks keep and read travels through the control plane
// (state, ports, the machine's id, the trusted credential sealed from a
// file), and juju-reboot restarts the unit with stop, then start.
func TestJujuHookToolsEndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	charm := filepath.Join(dir, "tools")
	for name, body := range toolsCharm {
		mode, content := os.FileMode(0o644), body
		if strings.HasPrefix(name, "hooks/") {
			mode, content = 0o755, "#!/bin/sh\nset -e\n"+body+"\n"
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(charm, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(charm, name), []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "cloud.key"), []byte("KEY-e2e-xyzzy"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeEnv := func(name, reboot string) string {
		env := fmt.Sprintf(`apiVersion: "fixpoint/v1"
name: "tools"
services: tools: {charm: %q, trust: true, config: reboot: %q}
secrets: cloud: content: "client-key": file: "./cloud.key"
credential: {type: "lxd", name: "localhost", auth_type: "certificate", secret: "cloud"}
`, charm, reboot)
		path := filepath.Join(dir, name+".cue")
		if err := os.WriteFile(path, []byte(env), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	data := t.TempDir()
	up := startUp(t, data, writeEnv("deploy", "no"))
	st := up.waitConverged(t, 10*time.Minute)
	unit := st.Units["tools/0"]
	if unit == nil || strings.Join(unit.Ports, ",") != "8080/tcp@website" {
		t.Fatalf("tools/0 = %+v; want it settled with 8080/tcp open for website alone", unit)
	}
	m := st.Machines[unit.Machine]
	if m == nil || m.ID != "0" {
		t.Errorf("machine %s = %+v; want Juju's id 0", unit.Machine, m)
	}
	file := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(data, "agent", "units", "tools-0", "charm", name))
		return string(b)
	}
	if got := file("hooks.log"); got != "config-changed 0\nstart 0\n" {
		t.Errorf("hooks.log = %q; want the machine id, and the state install set read back in config-changed", got)
	}
	var cred struct {
		Type, Name string
		Credential struct {
			AuthType string            `json:"auth-type"`
			Attrs    map[string]string `json:"attrs"`
		}
	}
	if err := json.Unmarshal([]byte(file("credential.json")), &cred); err != nil || cred.Type != "lxd" || cred.Credential.Attrs["client-key"] != "KEY-e2e-xyzzy" {
		t.Errorf("credential.json = %q (%v); want the lxd credential with the key from cloud.key", file("credential.json"), err)
	}
	var netw struct {
		Binds []struct {
			Interface string `json:"interface-name"`
			MAC       string `json:"mac-address"`
		} `json:"bind-addresses"`
	}
	if err := json.Unmarshal([]byte(file("network.json")), &netw); err != nil || len(netw.Binds) != 1 || netw.Binds[0].Interface == "" || netw.Binds[0].MAC == "" {
		t.Errorf("network.json = %q (%v); want the interface carrying the unit's address", file("network.json"), err)
	}

	r := fixpoint(t, 6*time.Minute, "apply", "-f", writeEnv("reboot", "yes"), "--yes", "--wait", "--timeout", "5m", "--data-dir", data)
	if r.code != exitOK {
		t.Fatalf("apply exited %d:\n%s\n%s\nup:\n%s", r.code, r.stdout, r.stderr, up.out)
	}
	if got := file("hooks.log"); got != "config-changed 0\nstart 0\nconfig-changed 0\nstop\nstart 0\n" {
		t.Errorf("after juju-reboot, hooks.log = %q; want config-changed, then stop and start", got)
	}
	if st := statusJSON(t, data); st.Units["tools/0"] == nil || st.Units["tools/0"].Phase != engine.Settled {
		t.Errorf("after the reboot tools/0 = %+v", st.Units["tools/0"])
	}
	up.stop(t)
}
