package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// systemdUnits are the service definitions of contrib/systemd, each with
// the env-file that gives its flags.
var systemdUnits = map[string]string{
	"fixpoint-server.service": "fixpoint-server.env",
	"fixpoint-agent.service":  "fixpoint-agent.env",
}

// unitVar is a variable an ExecStart line expands: ${NAME} or $NAME.
var unitVar = regexp.MustCompile(`\$\{?([A-Z_][A-Z0-9_]*)\}?`)

// TestSystemdUnitsVerify runs systemd-analyze verify on the units, with
// the binary and env-file paths pointed at this machine's, and fails on
// any complaint: verify reports an unknown key or a bad value as a
// warning and still exits 0.
func TestSystemdUnitsVerify(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed here: the units in contrib/systemd are not verified")
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var units []string
	for unit, env := range systemdUnits {
		data, err := os.ReadFile(repo("contrib", "systemd", unit))
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(string(data), "/usr/local/bin/fixpoint", bin)
		text = strings.ReplaceAll(text, "EnvironmentFile=/etc/fixpoint/", "EnvironmentFile="+dir+"/")
		if err := os.WriteFile(filepath.Join(dir, unit), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		envData, err := os.ReadFile(repo("contrib", "systemd", env))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, env), envData, 0o644); err != nil {
			t.Fatal(err)
		}
		units = append(units, filepath.Join(dir, unit))
	}
	cmd := exec.Command(analyze, append([]string{"verify"}, units...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if err != nil || out.Len() > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out.String())
	}
}

// TestSystemdEnvFilesDefineWhatUnitsUse: every variable a unit's
// ExecStart expands is set in its env-file, and every flag the env-files
// name is one the command takes.
func TestSystemdEnvFilesDefineWhatUnitsUse(t *testing.T) {
	for unit, env := range systemdUnits {
		data, err := os.ReadFile(repo("contrib", "systemd", unit))
		if err != nil {
			t.Fatal(err)
		}
		envData, err := os.ReadFile(repo("contrib", "systemd", env))
		if err != nil {
			t.Fatal(err)
		}
		set := map[string]bool{}
		for _, l := range strings.Split(string(envData), "\n") {
			if name, _, ok := strings.Cut(l, "="); ok && !strings.HasPrefix(l, "#") {
				set[name] = true
			}
		}
		exec, _, _ := strings.Cut(string(data)[strings.Index(string(data), "ExecStart="):], "\n\n")
		vars := unitVar.FindAllStringSubmatch(exec, -1)
		if len(vars) < 2 {
			t.Fatalf("%s: found %d variables in ExecStart", unit, len(vars))
		}
		for _, v := range vars {
			if !set[v[1]] {
				t.Errorf("%s expands $%s, which %s does not set", unit, v[1], env)
			}
		}
		// The flags the unit passes exist.
		sub := strings.TrimSuffix(strings.TrimPrefix(unit, "fixpoint-"), ".service")
		help, err := runHelp(t, sub)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range regexp.MustCompile(`--[a-z][a-z-]+`).FindAllString(exec+string(envData), -1) {
			if !strings.Contains(help, f+" ") {
				t.Errorf("%s or %s passes %s, which fixpoint %s does not take", unit, env, f, sub)
			}
		}
	}
}

// runHelp is fixpoint SUB --help, from the command tree in this process.
func runHelp(t *testing.T, sub string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs([]string{sub, "--help"})
	err := root.Execute()
	return out.String(), err
}
