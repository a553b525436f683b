package legacy

import (
	"encoding/json"
	"fmt"
	"net"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// setState writes one key of the unit's private state.
func (w *hookWrites) setState(key, value string) {
	st := make(map[string]string, len(w.state)+1)
	for k, v := range w.state {
		st[k] = v
	}
	st[key] = value
	w.state, w.stateWritten = st, true
}

// applicationStatus is the status the leader set for its application, in
// this call or an earlier one; nil if none.
func (w *hookWrites) applicationStatus() *charmapi.Status {
	if w.appStatus != nil {
		return w.appStatus
	}
	raw, ok := w.state[model.StateAppStatus]
	if !ok {
		return nil
	}
	var st charmapi.Status
	if json.Unmarshal([]byte(raw), &st) != nil {
		return nil
	}
	return &st
}

// applicationVersionSet is `application-version-set VERSION`: the version
// of the workload, as `juju status` would show it; kept in the unit's
// private state.
func (w *hookWrites) applicationVersionSet(c *call) (any, error) {
	args := c.f.args
	if len(args) == 0 {
		return nil, usagef("no version specified")
	}
	if err := checkEmpty(args[1:]); err != nil {
		return nil, err
	}
	w.setState(model.StateAppVersion, args[0])
	return noOutput{}, nil
}

// networkInfo is one binding's network config in Juju's shape
// (apiserver/params NetworkInfoResult): the JSON and YAML key names differ
// there for historical reasons, and are kept here as Juju prints them.
type networkInfo struct {
	BindAddresses    []bindAddress `json:"bind-addresses,omitempty" yaml:"bind-addresses,omitempty"`
	EgressSubnets    []string      `json:"egress-subnets,omitempty" yaml:"egress-subnets,omitempty"`
	IngressAddresses []string      `json:"ingress-addresses,omitempty" yaml:"ingress-addresses,omitempty"`
}

type bindAddress struct {
	MACAddress    string          `json:"mac-address" yaml:"macaddress"`
	InterfaceName string          `json:"interface-name" yaml:"interfacename"`
	Addresses     []interfaceAddr `json:"addresses" yaml:"addresses"`
}

type interfaceAddr struct {
	Hostname string `json:"hostname" yaml:"hostname"`
	Address  string `json:"value" yaml:"address"`
	CIDR     string `json:"cidr" yaml:"cidr"`
}

// networkGet is `network-get [-r ID] BINDING [--bind-address]
// [--ingress-address] [--egress-subnets] [--primary-address]`. A unit has
// one address here, so every binding answers with it: bound to, reached
// at, and egressing from that address (a /32 or /128 subnet), on the
// host interface that carries it (bindNIC).
func (in *inputs) networkGet(c *call) (any, error) {
	args := c.f.args
	if len(args) < 1 {
		return nil, usagef("no arguments specified")
	}
	binding := args[0]
	if binding == "" {
		return nil, usagef("no binding name specified")
	}
	if err := checkEmpty(args[1:]); err != nil {
		return nil, err
	}
	if c.f.has("relation") {
		if _, err := in.relationArg(c); err != nil {
			return nil, err
		}
	}
	addr := in.address()
	if addr == "" {
		return nil, fmt.Errorf("no network config found for binding %q", binding)
	}
	ni := networkInfo{
		BindAddresses:    []bindAddress{{Addresses: []interfaceAddr{{Address: addr}}}},
		IngressAddresses: []string{addr},
	}
	if ip := net.ParseIP(addr); ip != nil {
		bits := "/32"
		if ip.To4() == nil {
			bits = "/128"
		}
		ni.EgressSubnets = []string{addr + bits}
		ni.BindAddresses[0].Addresses[0].CIDR = addr + bits
	}
	// The interface carrying the address on the unit's machine, as
	// Juju's machine agent reports its link-layer devices.
	if nic, cidr, ok := bindNIC(in.net, addr); ok {
		ni.BindAddresses[0].InterfaceName, ni.BindAddresses[0].MACAddress = nic.Name, nic.MAC
		if cidr != "" {
			ni.BindAddresses[0].Addresses[0].CIDR = cidr
		}
	}
	var keys []string
	for _, k := range []string{"bind-address", "ingress-address", "egress-subnets"} {
		if c.f.bool(k) {
			keys = append(keys, k)
		}
	}
	if c.f.bool("primary-address") {
		if len(keys) > 0 {
			return nil, fmt.Errorf("--primary-address must be the only flag specified")
		}
		return addr, nil
	}
	if len(keys) == 0 {
		return ni, nil
	}
	values := map[string]any{"bind-address": addr, "ingress-address": addr, "egress-subnets": ni.EgressSubnets}
	if len(keys) == 1 {
		return values[keys[0]], nil
	}
	out := map[string]any{}
	for _, k := range keys {
		out[k] = values[k]
	}
	return out, nil
}

var networkGetFlags = []flagDef{relationFlag, formatFlag,
	{name: "bind-address", isBool: true}, {name: "ingress-address", isBool: true},
	{name: "egress-subnets", isBool: true}, {name: "primary-address", isBool: true}}

// goalStatus is one entry of goal-state, as Juju formats it.
type goalStatus struct {
	Status string `json:"status" yaml:"status"`
	Since  string `json:"since,omitempty" yaml:"since,omitempty"`
}

// goalState is goal-state's output: the service's units, and per
// endpoint the remote service and its units.
type goalState struct {
	Units     map[string]goalStatus            `json:"units" yaml:"units"`
	Relations map[string]map[string]goalStatus `json:"relations" yaml:"relations"`
}

// goalState is `goal-state [--format yaml|json]`. The goal here is
// what the universe holds: the unit and its peers, and every relation's
// remote service ("joined") and remote units. Units are "active", or
// "dying" for the unit on its way out.
func (in *inputs) goalState(c *call) (any, error) {
	if err := checkEmpty(c.f.args); err != nil {
		return nil, err
	}
	since := in.started.Format(time.RFC3339)
	gs := goalState{Units: map[string]goalStatus{}, Relations: map[string]map[string]goalStatus{}}
	self := "active"
	if in.u.Life == "dying" {
		self = "dying"
	}
	gs.Units[in.u.Unit] = goalStatus{Status: self, Since: since}
	for _, r := range in.u.Relations {
		if in.isPeer(r.Ident) {
			for u := range r.Units {
				gs.Units[u] = goalStatus{Status: "active", Since: since}
			}
			continue
		}
		m := gs.Relations[r.Name]
		if m == nil {
			m = map[string]goalStatus{}
			gs.Relations[r.Name] = m
		}
		if r.RemoteService != "" {
			m[r.RemoteService] = goalStatus{Status: "joined", Since: since}
		}
		for u := range r.Units {
			m[u] = goalStatus{Status: "active", Since: since}
		}
	}
	return gs, nil
}

// relationModelGet is `relation-model-get [-r ID]`: the model on the
// other side of a relation, always this one here.
func (in *inputs) relationModelGet(c *call) (any, error) {
	if _, err := in.relationArg(c); err != nil {
		return nil, err
	}
	if err := checkEmpty(c.f.args); err != nil {
		return nil, err
	}
	return map[string]string{"uuid": in.modelUUID}, nil
}
