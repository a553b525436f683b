package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// network is where the servers listen. With network namespaces (root and
// `ip netns`), each server has a namespace of its own holding one end of a
// veth pair whose other end is on a bridge in a hub namespace, where the
// agents run; every address is a private one inside these namespaces,
// none in the bench's own. Partitioning a server takes its link down.
// Without them every server listens on 127.0.0.1 and partitions are off.
type network struct {
	hub   string   // the hub namespace, "" on loopback
	nodes []string // each server's namespace
	addrs []string // each server's address
	// off says why partitions are not possible, "" when they are.
	off string
	// made lists the namespaces created, to delete.
	made []string
}

// subnet is the private /24 inside the bench's namespaces: servers are .1
// to .N, the hub's bridge .254.
const subnet = "10.213.77."

// newNetwork makes the namespaces for n servers when want is set and the
// machine allows it; otherwise it returns the loopback layout with the
// reason.
func newNetwork(tag string, n int, want bool) (*network, error) {
	loop := &network{}
	for range n {
		loop.addrs = append(loop.addrs, "127.0.0.1")
	}
	switch {
	case !want:
		loop.off = "turned off (-partition=false)"
		return loop, nil
	case os.Geteuid() != 0:
		loop.off = "needs root to make network namespaces"
		return loop, nil
	}
	if _, err := exec.LookPath("ip"); err != nil {
		loop.off = "no ip command (iproute2) for network namespaces"
		return loop, nil
	}
	nw := &network{hub: "fpchaos-" + tag + "-hub"}
	if err := nw.add(nw.hub); err != nil {
		loop.off = fmt.Sprintf("ip netns unavailable: %v", err)
		return loop, nil
	}
	steps := [][]string{
		{"-n", nw.hub, "link", "set", "lo", "up"},
		{"-n", nw.hub, "link", "add", "br0", "type", "bridge"},
		{"-n", nw.hub, "addr", "add", subnet + "254/24", "dev", "br0"},
		{"-n", nw.hub, "link", "set", "br0", "up"},
	}
	for i := range n {
		ns := fmt.Sprintf("fpchaos-%s-n%d", tag, i+1)
		if err := nw.add(ns); err != nil {
			nw.teardown()
			return nil, err
		}
		nw.nodes = append(nw.nodes, ns)
		nw.addrs = append(nw.addrs, fmt.Sprintf("%s%d", subnet, i+1))
		hubEnd, nodeEnd := fmt.Sprintf("v%dh", i+1), "eth0"
		steps = append(steps,
			[]string{"-n", ns, "link", "set", "lo", "up"},
			[]string{"-n", nw.hub, "link", "add", hubEnd, "type", "veth", "peer", "name", nodeEnd, "netns", ns},
			[]string{"-n", nw.hub, "link", "set", hubEnd, "master", "br0"},
			[]string{"-n", nw.hub, "link", "set", hubEnd, "up"},
			[]string{"-n", ns, "addr", "add", nw.addrs[i] + "/24", "dev", nodeEnd},
			[]string{"-n", ns, "link", "set", nodeEnd, "up"},
		)
	}
	for _, s := range steps {
		if err := ip(s...); err != nil {
			nw.teardown()
			return nil, err
		}
	}
	return nw, nil
}

func (nw *network) add(ns string) error {
	if err := ip("netns", "add", ns); err != nil {
		return err
	}
	nw.made = append(nw.made, ns)
	return nil
}

// ip runs one ip command.
func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// nodeNS is the namespace server i runs in, "" on loopback.
func (nw *network) nodeNS(i int) string {
	if nw.hub == "" {
		return ""
	}
	return nw.nodes[i]
}

// partition cuts server i off from everyone (the other servers, the
// agents and the bench); heal joins it again.
func (nw *network) partition(i int) error {
	return ip("-n", nw.hub, "link", "set", fmt.Sprintf("v%dh", i+1), "down")
}

func (nw *network) heal(i int) error {
	return ip("-n", nw.hub, "link", "set", fmt.Sprintf("v%dh", i+1), "up")
}

// teardown deletes the namespaces (their links go with them).
func (nw *network) teardown() {
	for _, ns := range nw.made {
		_ = ip("netns", "del", ns)
	}
	nw.made = nil
}

// dial connects from the hub namespace, where the servers are reachable,
// or from the bench's own on loopback.
func (nw *network) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	if nw.hub == "" {
		return d.DialContext(ctx, network, addr)
	}
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		// Only this goroutine runs on the thread while it is in the hub.
		// The thread goes back before it is unlocked; one that cannot is
		// left locked, so it ends with the goroutine. (Ending threads
		// otherwise would be wrong: a child started from a thread gets
		// its Pdeathsig when that thread ends.)
		runtime.LockOSThread()
		home, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			ch <- result{nil, err}
			return
		}
		defer home.Close()
		hub, err := os.Open("/var/run/netns/" + nw.hub)
		if err != nil {
			ch <- result{nil, err}
			return
		}
		defer hub.Close()
		if err := unix.Setns(int(hub.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- result{nil, fmt.Errorf("enter namespace %s: %w", nw.hub, err)}
			return
		}
		c, err := d.DialContext(ctx, network, addr)
		if unix.Setns(int(home.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		ch <- result{c, err}
	}()
	r := <-ch
	return r.c, r.err
}
