package main

import (
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/engine/api"
)

// TestEnvForFile: a file goes to the environment it names; to the
// default one when it names the default, when there is no other, or while
// the default is unnamed; a name that is none of them, beside others, is
// refused saying how to add it.
func TestEnvForFile(t *testing.T) {
	named := []api.EnvInfo{{Name: "prod", Default: true}, {Name: "dev"}, {Name: "qa"}}
	for _, tc := range []struct {
		envs []api.EnvInfo
		file string
		want string
		err  string
	}{
		{named, "prod", "", ""},
		{named, "dev", "dev", ""},
		{named, "staging", "", "fixpoint env add staging"},
		{[]api.EnvInfo{{Name: "prod", Default: true}}, "renamed", "", ""},
		{[]api.EnvInfo{{Default: true}, {Name: "dev"}}, "shop", "", ""},
		{[]api.EnvInfo{{Default: true}, {Name: "dev"}}, "dev", "dev", ""},
	} {
		got, err := envForFile(tc.envs, tc.file)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("file %s over %+v: %q, %v; want an error saying %q", tc.file, tc.envs, got, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("file %s over %+v: %q, %v; want %q", tc.file, tc.envs, got, err, tc.want)
		}
	}
}
