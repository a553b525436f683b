package main

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"

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
