package main

import (
	"fmt"
	"strings"

	"github.com/fixpoint/fixpoint/engine/sim"
	"github.com/fixpoint/fixpoint/model"
)

// charmResources gives env's services the files of `charm test
// --resource SERVICE:NAME=PATH` flags, as an environment file's
// services.SERVICE.resources.NAME: "PATH" would (PATH relative to the
// working directory). A file that cannot be a resource, or a name the
// charm does not declare, is reported when the environment is simulated.
func charmResources(env *sim.Env, flags []string) error {
	for _, f := range flags {
		at, path, ok := strings.Cut(f, "=")
		svc, name, ok2 := strings.Cut(at, ":")
		if !ok || !ok2 || path == "" {
			return fmt.Errorf("--resource %q: want SERVICE:NAME=PATH, e.g. web:payload=./payload.txt", f)
		}
		if err := model.CheckName(model.KindService, svc); err != nil {
			return fmt.Errorf("--resource %q: %w", f, err)
		}
		if err := model.CheckName(model.KindResource, name); err != nil {
			return fmt.Errorf("--resource %q: %w", f, err)
		}
		s := env.Service(svc)
		if s == nil {
			return fmt.Errorf("--resource %q: no service %s; the services are %s", f, svc, strings.Join(env.Services(), ", "))
		}
		s.Resource(name, path)
	}
	return nil
}
