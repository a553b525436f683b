package legacy

import (
	"net"
	"strings"
)

// hostNIC is one network interface of the agent's host, as network-get
// reports it: its name, its hardware address and the networks of its
// addresses.
type hostNIC struct {
	Name string
	MAC  string
	Nets []*net.IPNet
}

// netHost is where network-get learns which interface carries a unit's
// address: the agent's host (hostNetwork), or a fixed one in tests.
type netHost interface {
	// NICs lists the host's interfaces.
	NICs() ([]hostNIC, error)
	// Source is the host's own address that traffic to ip leaves from.
	Source(ip net.IP) (net.IP, error)
}

// noLinkMAC is the hardware address Linux reports for an interface with
// no link layer of its own (loopback, tunnels): what Juju's machine agent
// records for it too, since it reads the kernel's.
const noLinkMAC = "00:00:00:00:00:00"

// hostNetwork is the agent's host: units run there, so its interfaces are
// theirs.
type hostNetwork struct{}

// NICs lists the host's interfaces that are up.
func (hostNetwork) NICs() ([]hostNIC, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	out := make([]hostNIC, 0, len(ifs))
	for _, ifc := range ifs {
		if ifc.Flags&net.FlagUp == 0 {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		n := hostNIC{Name: ifc.Name, MAC: ifc.HardwareAddr.String()}
		if n.MAC == "" {
			n.MAC = noLinkMAC
		}
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok {
				n.Nets = append(n.Nets, ipn)
			}
		}
		out = append(out, n)
	}
	return out, nil
}

// Source asks the kernel which local address a datagram to ip would
// leave from; connecting a UDP socket sends nothing.
func (hostNetwork) Source(ip net.IP) (net.IP, error) {
	c, err := net.DialUDP("udp", nil, &net.UDPAddr{IP: ip, Port: 9})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).IP, nil
}

// bindNIC is the interface carrying addr on h and the CIDR of its network
// there: the interface holding addr itself, else the one the host reaches
// addr from (an address the host is known by but that sits on a router,
// as behind NAT). ok is false when neither is found.
func bindNIC(h netHost, addr string) (nic hostNIC, cidr string, ok bool) {
	ip := net.ParseIP(strings.TrimSpace(addr))
	if ip == nil {
		return hostNIC{}, "", false
	}
	nics, err := h.NICs()
	if err != nil {
		return hostNIC{}, "", false
	}
	if n, c, ok := carrying(nics, ip); ok {
		return n, c, true
	}
	src, err := h.Source(ip)
	if err != nil {
		return hostNIC{}, "", false
	}
	if n, _, ok := carrying(nics, src); ok {
		return n, "", true
	}
	return hostNIC{}, "", false
}

// carrying finds the interface one of whose addresses is ip, and the CIDR
// of that address's network.
func carrying(nics []hostNIC, ip net.IP) (hostNIC, string, bool) {
	for _, n := range nics {
		for _, ipn := range n.Nets {
			if ipn.IP.Equal(ip) {
				masked := &net.IPNet{IP: ipn.IP.Mask(ipn.Mask), Mask: ipn.Mask}
				return n, masked.String(), true
			}
		}
	}
	return hostNIC{}, "", false
}
