package main

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/model"
)

func TestJujuModelNames(t *testing.T) {
	for _, m := range []string{"shop", "admin/shop", "prod:shop", "prod:admin/shop"} {
		if got := modelName(m); got != "shop" {
			t.Errorf("modelName(%q) = %q, want shop", m, got)
		}
	}
}

func TestJujuEntityNames(t *testing.T) {
	got := entityNames([]string{"unit-web-0", "unit-my-app-12", "application-db", "machine-m1", "web/1", "db"})
	want := []string{"web/0", "my-app/12", "db", "m1", "web/1", "db"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("entityNames = %v, want %v", got, want)
	}
	for l, want := range map[*model.LogLine]string{{Unit: "web/0"}: "unit-web-0", {Machine: "m1"}: "machine-m1", {Node: "n2"}: "controller-n2"} {
		if got := logEntity(l); got != want {
			t.Errorf("logEntity(%+v) = %s, want %s", l, got, want)
		}
	}
}

// The front's command line: usage errors exit 2, a command it does not
// carry out yet exits 1 naming what to do, each as an ERROR line; none
// needs a control plane.
func TestJujuFrontUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"nonsense"}, exitUsage, `ERROR juju: "nonsense" is not a juju command`},
		{[]string{"status", "--format", "xml"}, exitUsage, `ERROR invalid value "xml" for option --format`},
		{[]string{"status", "--frobnicate"}, exitUsage, "ERROR unknown flag: --frobnicate"},
		{[]string{"destroy-model", "jubilant-1234"}, exitUsage, "ERROR destroy-model jubilant-1234 removes every application of the model: pass --no-prompt"},
		{[]string{"add-model", "m", "--config", "a=b"}, exitFailed, "ERROR juju add-model --config: not supported by fixpoint"},
		{[]string{"add-model", "m", "aws"}, exitFailed, `ERROR cloud "aws" not found`},
		{[]string{"exec", "--machine", "0", "--", "true"}, exitFailed, "ERROR juju exec --machine is not supported"},
		{[]string{"version"}, exitOK, ""},
	} {
		var stdout, stderr bytes.Buffer
		code := jujuMain(context.Background(), c.args, &stdout, &stderr)
		if code != c.code || !strings.HasPrefix(stderr.String(), c.want) {
			t.Errorf("juju %v: exit %d, stderr %q; want %d, %q", c.args, code, stderr.String(), c.code, c.want)
		}
	}
	var stdout bytes.Buffer
	if code := jujuMain(context.Background(), []string{"version", "--format", "json", "--all"}, &stdout, &bytes.Buffer{}); code != 0 || !strings.Contains(stdout.String(), `"version":"3.6.`) {
		t.Errorf("version --format json --all: %d %s", code, stdout.String())
	}
}

// add-model switches the saved context's model, which the front and
// fixpoint's commands then use; destroy-model of that model puts the
// default environment back, and leaves another context's model alone.
func TestJujuSwitchesTheContextsModel(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("FIXPOINT_ADDR", "")
	t.Setenv("FIXPOINT_ENV", "")
	t.Setenv("FIXPOINT_CONTEXT", "")
	path, err := contextsPath()
	if err != nil {
		t.Fatal(err)
	}
	cs := &contexts{Current: "c1", Contexts: map[string]*savedContext{"c1": {Addrs: []string{"127.0.0.1:1"}, Token: "t"}}}
	if err := cs.save(path); err != nil {
		t.Fatal(err)
	}
	f := &jujuFront{}
	cmd := &cobra.Command{}
	cmd.SetErr(&bytes.Buffer{})
	current := func() string {
		t.Helper()
		m, err := f.currentModel()
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if err := f.switchModel(cmd, "jubilant-1"); err != nil || current() != "jubilant-1" {
		t.Fatalf("after switching: %q, %v", current(), err)
	}
	if err := f.setContextModel(cmd, "other", ""); err != nil || current() != "jubilant-1" {
		t.Fatalf("forgetting another model changed the context's: %q, %v", current(), err)
	}
	if err := f.setContextModel(cmd, "jubilant-1", ""); err != nil || current() != "" {
		t.Fatalf("after destroying it: %q, %v", current(), err)
	}
	t.Setenv("FIXPOINT_ENV", "env-m")
	if current() != "env-m" {
		t.Fatalf("$FIXPOINT_ENV names the current model first; got %q", current())
	}
}
