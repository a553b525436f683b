package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// probe is what the probe unit's install hook measured: the mean wall time
// of one call of each kind, timed in the same hook, interleaved in rounds
// so that the run's changing load falls on all three alike.
type probe struct {
	Calls         int     `json:"calls"`
	TrueMS        float64 `json:"true_ms"`
	ToolMS        float64 `json:"tool_ms"`
	FallbackMS    float64 `json:"fallback_ms"`
	ToolRatio     float64 `json:"tool_ratio"`
	FallbackRatio float64 `json:"fallback_ratio"`
	Load          float64 `json:"load_avg"` // 1-minute load average when the hook finished
	Program       string  `json:"program"`  // what the hook's unit-get links to
	// Shell is the probe hook's --hook-shell: under builtin its tool
	// calls are fixpoint-sh builtins, the fallback's still processes.
	Shell string `json:"shell"`
}

// probeFile is where the probe hook leaves its figures, in its unit's
// directory.
const probeFile = "oldhooks-probe"

// probeHook is the probe charm's install hook (POSIX sh). Every call's
// output goes to /dev/null; `date` runs only around each batch.
const probeHook = `#!/bin/sh
# install: time, in this one hook, spawning /bin/true, calling unit-get
# through the hook tools on PATH (fixpoint-hook) and calling it through the
# fixpoint binary (the agent's fallback), in four interleaved rounds.
set -e
n=%d
fallback=%s
tool=$(command -v unit-get)
batch() {
	batch_i=0
	while [ $batch_i -lt $n ]; do
		"$@" >/dev/null
		batch_i=$((batch_i + 1))
	done
}
t_true=0 t_tool=0 t_fb=0
for round in 1 2 3 4; do
	s=$(date +%%s%%N); batch /bin/true; e=$(date +%%s%%N); t_true=$((t_true + e - s))
	s=$(date +%%s%%N); batch "$tool" private-address; e=$(date +%%s%%N); t_tool=$((t_tool + e - s))
	s=$(date +%%s%%N); batch "$fallback" private-address; e=$(date +%%s%%N); t_fb=$((t_fb + e - s))
done
program=$(basename "$(readlink "$tool")")
load=$(cut -d' ' -f1 /proc/loadavg)
printf 'calls=%%s\ntrue_ns=%%s\ntool_ns=%%s\nfallback_ns=%%s\nprogram=%%s\nload=%%s\n' \
	$((4 * n)) "$t_true" "$t_tool" "$t_fb" "$program" "$load" >"$FIXPOINT_UNIT_DIR/%s.tmp"
mv "$FIXPOINT_UNIT_DIR/%s.tmp" "$FIXPOINT_UNIT_DIR/%s"
`

// writeProbeCharm writes the probe charm under dir: metadata and an
// install hook, with a link named unit-get to the fixpoint binary as the
// fallback it times.
func writeProbeCharm(dir, fixpoint string, calls int) (string, error) {
	fallback := filepath.Join(dir, "fallback", "unit-get")
	if err := os.MkdirAll(filepath.Dir(fallback), 0o755); err != nil {
		return "", err
	}
	if err := os.Symlink(fixpoint, fallback); err != nil {
		return "", err
	}
	charm := filepath.Join(dir, "probe")
	if err := os.MkdirAll(filepath.Join(charm, "hooks"), 0o755); err != nil {
		return "", err
	}
	meta := "name: probe\nsummary: times hook tool calls against /bin/true for bench/oldhooks\n"
	if err := os.WriteFile(filepath.Join(charm, "metadata.yaml"), []byte(meta), 0o644); err != nil {
		return "", err
	}
	hook := fmt.Sprintf(probeHook, calls/4, shQuote(fallback), probeFile, probeFile, probeFile)
	if err := os.WriteFile(filepath.Join(charm, "hooks", "install"), []byte(hook), 0o755); err != nil {
		return "", err
	}
	return charm, nil
}

// readProbe finds what the probe hook wrote under the agent's directory.
func readProbe(agentDir string) (*probe, error) {
	var path string
	err := filepath.WalkDir(agentDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == probeFile {
			path = p
			return fs.SkipAll
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if path == "" {
		return nil, fmt.Errorf("the probe hook left no %s under %s", probeFile, agentDir)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	kv := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			kv[k] = v
		}
	}
	num := func(k string) (float64, error) {
		f, err := strconv.ParseFloat(kv[k], 64)
		if err != nil {
			return 0, fmt.Errorf("probe %s=%q: %v", k, kv[k], err)
		}
		return f, nil
	}
	var p probe
	var calls, tr, tool, fb float64
	for k, dst := range map[string]*float64{"calls": &calls, "true_ns": &tr, "tool_ns": &tool, "fallback_ns": &fb, "load": &p.Load} {
		if *dst, err = num(k); err != nil {
			return nil, err
		}
	}
	if calls <= 0 || tr <= 0 {
		return nil, fmt.Errorf("probe measured nothing: %q", data)
	}
	p.Calls = int(calls)
	p.TrueMS, p.ToolMS, p.FallbackMS = tr/calls/1e6, tool/calls/1e6, fb/calls/1e6
	p.ToolRatio, p.FallbackRatio = tool/tr, fb/tr
	p.Program = kv["program"]
	return &p, nil
}

// shQuote quotes s for POSIX sh.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
