package legacy

import (
	"errors"
	"net"
	"testing"
)

// fixedNet is a machine whose interfaces the test names, and which reaches
// every address it does not hold through via.
type fixedNet struct {
	nics []hostNIC
	via  net.IP
}

func (f fixedNet) NICs() ([]hostNIC, error) { return f.nics, nil }

func (f fixedNet) Source(ip net.IP) (net.IP, error) {
	if f.via == nil {
		return nil, errors.New("network is unreachable")
	}
	return f.via, nil
}

func mustCIDR(s string) *net.IPNet {
	ip, n, err := net.ParseCIDR(s)
	if err != nil {
		panic(err)
	}
	n.IP = ip
	return n
}

// testNet is the machine of testUniverse's web/0 (10.0.0.5).
var testNet = fixedNet{nics: []hostNIC{
	{Name: "lo", MAC: noLinkMAC, Nets: []*net.IPNet{mustCIDR("127.0.0.1/8")}},
	{Name: "ens3", MAC: "52:54:00:12:34:56", Nets: []*net.IPNet{mustCIDR("10.0.0.5/24"), mustCIDR("fe80::1/64")}},
}}

func TestBindNIC(t *testing.T) {
	for _, c := range []struct {
		name, addr, nic, cidr string
		via                   net.IP
		ok                    bool
	}{
		{name: "an address the machine holds", addr: "10.0.0.5", nic: "ens3", cidr: "10.0.0.0/24", ok: true},
		{name: "loopback", addr: "127.0.0.1", nic: "lo", cidr: "127.0.0.0/8", ok: true},
		{name: "an address behind NAT, reached from ens3", addr: "203.0.113.7", via: net.ParseIP("10.0.0.5"), nic: "ens3", ok: true},
		{name: "unreachable", addr: "203.0.113.7"},
		{name: "a host name", addr: "db.example"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := testNet
			h.via = c.via
			nic, cidr, ok := bindNIC(h, c.addr)
			if ok != c.ok || nic.Name != c.nic || cidr != c.cidr {
				t.Errorf("bindNIC(%s) = %q %q %v; want %q %q %v", c.addr, nic.Name, cidr, ok, c.nic, c.cidr, c.ok)
			}
		})
	}
}

// TestHostLoopbackNIC asks the real host: every machine has a loopback
// interface carrying 127.0.0.1, which network-get names with a MAC.
func TestHostLoopbackNIC(t *testing.T) {
	nic, cidr, ok := bindNIC(hostNetwork{}, "127.0.0.1")
	if !ok || nic.Name == "" || nic.MAC == "" || cidr != "127.0.0.0/8" {
		t.Fatalf("bindNIC(host, 127.0.0.1) = %+v %q %v; want the loopback interface, its MAC and 127.0.0.0/8", nic, cidr, ok)
	}
	ifc, err := net.InterfaceByName(nic.Name)
	if err != nil || ifc.Flags&net.FlagLoopback == 0 {
		t.Errorf("%s is not the host's loopback interface: %v %v", nic.Name, ifc, err)
	}
}

// TestHookcmdsNetworkGet is test_hookcmds.py's
// test_network_get_returns_addresses on this host: canonical/operator's
// charm reads its peer binding, whose address is the loopback's.
func TestHookcmdsNetworkGet(t *testing.T) {
	charm := conformanceCharm(t, "test_hookcmds")
	out := runHookcmdsAction(t, charm, hookcmdsUniverse(), "get-network-info", nil)
	var binds []struct {
		Interface string `json:"interface-name"`
		MAC       string `json:"mac-address"`
		Addresses []struct {
			Value, CIDR string
		}
	}
	jsonResult(t, out, "bind-addresses", &binds)
	if len(binds) != 1 || binds[0].Interface == "" || binds[0].MAC == "" || len(binds[0].Addresses) != 1 || binds[0].Addresses[0].Value != "127.0.0.1" {
		t.Errorf("bind-addresses = %+v; want 127.0.0.1 on a named interface with a MAC", binds)
	}
	var egress []string
	jsonResult(t, out, "egress-subnets", &egress)
	if len(egress) == 0 {
		t.Errorf("egress-subnets = %v", egress)
	}
}
