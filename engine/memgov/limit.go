// Package memgov governs a control-plane node's memory: the soft limit
// the Go runtime keeps (runtime/debug.SetMemoryLimit), where the limit
// comes from, and the pressure under which the node slows its intake
// rather than growing until the kernel kills it (governor.go).
//
// Where the limit comes from, first found wins:
//
//  1. the GOMEMLIMIT environment variable, which the runtime read at
//     start: an operator who set it meant it, and the node leaves it;
//  2. the --memory-limit flag of `fixpoint server` and `fixpoint up`
//     ("none" turns the limit off, whatever the cgroup says);
//  3. the memory limit of the node's cgroup (v2 memory.max, v1
//     memory.limit_in_bytes);
//  4. none: the runtime collects by GOGC alone and nothing slows.
package memgov

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
)

// Sources of a Limit, in the order of precedence.
const (
	SourceEnv    = "GOMEMLIMIT"
	SourceFlag   = "--memory-limit"
	SourceCgroup = "cgroup"
	SourceNone   = "none"
)

// MinLimit is the smallest limit the flag takes: below it a node spends
// its time collecting before it holds one environment.
const MinLimit = 64 << 20

// Limit is a node's memory limit and where it comes from.
type Limit struct {
	// Bytes is the soft limit; 0 when there is none.
	Bytes int64
	// Source is one of the Source constants.
	Source string
}

// String says the limit as a log line or a status line does.
func (l Limit) String() string {
	if l.Bytes <= 0 {
		return "no memory limit"
	}
	return fmt.Sprintf("memory limit %s (from %s)", FormatSize(uint64(l.Bytes)), l.Source)
}

var units = []struct {
	suffix string
	mult   float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"B", 1},
}

// ParseSize reads a size as the flag takes it: a number of bytes with an
// optional unit, binary (KiB, MiB, GiB, TiB) or decimal (KB, MB, GB, TB),
// the unit's case ignored, a decimal fraction allowed before a unit.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	for _, u := range units {
		if len(t) > len(u.suffix) && strings.EqualFold(t[len(t)-len(u.suffix):], u.suffix) {
			t, mult = strings.TrimSpace(t[:len(t)-len(u.suffix)]), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || t == "" || strings.ContainsAny(t, "eExXpP_+") || math.IsNaN(v) {
		return 0, fmt.Errorf("%q is not a size: write a number of bytes with a unit, e.g. 4GiB, 512MiB or 2000000000", s)
	}
	b := v * mult
	if b < 0 || b >= math.MaxInt64 {
		return 0, fmt.Errorf("%q is out of range: a size is between 0 and 8 EiB", s)
	}
	return int64(b), nil
}

// FormatSize writes n bytes in the largest binary unit that keeps one
// decimal.
func FormatSize(n uint64) string {
	switch {
	case n >= 1<<30:
		return strconv.FormatFloat(float64(n)/(1<<30), 'f', 1, 64) + " GiB"
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	case n >= 1<<10:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KiB"
	}
	return strconv.FormatUint(n, 10) + " B"
}

// Cgroup names where a process's cgroup is read: Root is the cgroup
// filesystem's mount, Self the process's /proc/self/cgroup. Production
// reads HostCgroup; tests point both at files of their own.
type Cgroup struct {
	Root, Self string
}

// HostCgroup is this process's cgroup.
var HostCgroup = Cgroup{Root: "/sys/fs/cgroup", Self: "/proc/self/cgroup"}

// unlimitedV1 is at or above what cgroup v1 writes for "no limit" (the
// largest page-aligned int64).
const unlimitedV1 = math.MaxInt64 &^ (1<<12 - 1)

// Limit reads the cgroup's memory limit: 0 when it sets none, or when the
// process is in no cgroup the files say. An unreadable limit file of a
// cgroup that names one is an error.
func (c Cgroup) Limit() (int64, error) {
	f, err := os.Open(c.Self)
	if err != nil {
		return 0, nil // not on Linux, or no cgroups: no limit to take
	}
	defer f.Close()
	var v2, v1 string
	haveV2 := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			v2, haveV2 = parts[2], true
		case strings.Contains(","+parts[1]+",", ",memory,"):
			v1 = parts[2]
		}
	}
	if v1 != "" {
		return readLimit(filepath.Join(c.Root, "memory", v1, "memory.limit_in_bytes"))
	}
	if haveV2 {
		return readLimit(filepath.Join(c.Root, v2, "memory.max"))
	}
	return 0, nil
}

// readLimit reads one limit file: "max" or v1's huge value is none; a
// missing file (the controller not enabled there) is none.
func readLimit(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read the cgroup's memory limit %s: %w", path, err)
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("the cgroup's memory limit in %s is %q, not a number of bytes; give --memory-limit instead", path, s)
	}
	if n >= unlimitedV1 {
		return 0, nil
	}
	return n, nil
}

// Resolve works out a node's limit from the flag's value ("" when not
// given), the environment (getenv, os.LookupEnv in production) and the
// cgroup, by the precedence the package states. A bad flag is an error
// that names it.
func Resolve(flag string, getenv func(string) (string, bool), cg Cgroup) (Limit, error) {
	var fromFlag int64
	none := strings.EqualFold(strings.TrimSpace(flag), "none")
	if flag != "" && !none {
		n, err := ParseSize(flag)
		if err != nil {
			return Limit{}, fmt.Errorf("--memory-limit %w", err)
		}
		if n < MinLimit {
			return Limit{}, fmt.Errorf("--memory-limit %s is below the smallest limit, %s; give a larger size or none", flag, FormatSize(MinLimit))
		}
		fromFlag = n
	}
	if v, ok := getenv("GOMEMLIMIT"); ok && v != "" {
		// The runtime parsed it at start and refused to start on a bad
		// one; "off" is the largest limit, which is none.
		n := debug.SetMemoryLimit(-1)
		if n == math.MaxInt64 {
			n = 0
		}
		return Limit{Bytes: n, Source: SourceEnv}, nil
	}
	switch {
	case none:
		return Limit{Source: SourceNone}, nil
	case fromFlag > 0:
		return Limit{Bytes: fromFlag, Source: SourceFlag}, nil
	}
	n, err := cg.Limit()
	if err != nil {
		return Limit{}, err
	}
	if n > 0 {
		return Limit{Bytes: n, Source: SourceCgroup}, nil
	}
	return Limit{Source: SourceNone}, nil
}

// Apply sets the runtime's soft limit to l, unless it came from
// GOMEMLIMIT (already set) or there is none.
func (l Limit) Apply() {
	if l.Bytes > 0 && l.Source != SourceEnv {
		debug.SetMemoryLimit(l.Bytes)
	}
}
