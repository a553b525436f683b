package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/fixpoint/fixpoint/engine/charm"
	"github.com/fixpoint/fixpoint/model"
)

// The environment: a database and two front ends related to it, written
// as classic Juju hooks (testdata/charms/classic-*), seven units over the
// three machines. Every operator write sets one value v in every
// service's config: db's max_connections, web's and shop's port.
const envCUE = `apiVersion: "fixpoint/v1"
name:       "chaos"
services: {
	db: {charm: "./charms/db", units: 3, config: {max_connections: %[1]d}}
	web: {charm: "./charms/web", units: 2, config: {port: %[1]d}}
	shop: {charm: "./charms/web", units: 2, config: {port: %[1]d}}
}
relations: {
	"web-db": ["web:db", "db:db"]
	"shop-db": ["shop:db", "db:db"]
}
`

// configKey is the option of each service that holds the written value.
var configKey = map[string]string{"db": "max_connections", "web": "port", "shop": "port"}

// initialValue is the value the environment is first deployed with;
// writes use larger ones, each once.
const initialValue = 1000

// probe goes at the top of every hook: it records the hook's process and
// notes an overlap when the unit's previous hook process still runs (a
// zombie has ended). RUNS is replaced by the bench's records directory.
const probe = `# chaos probe: two hooks of one unit must never run at once.
_chaos_f="RUNS/${JUJU_UNIT_NAME%%/*}-${JUJU_UNIT_NAME#*/}"
read -r _c1 _c2 _c3 _c4 _c5 _c6 _c7 _c8 _c9 _c10 _c11 _c12 _c13 _c14 _c15 _c16 _c17 _c18 _c19 _c20 _c21 _chaos_st _c23 </proc/$$/stat || :
if [ -f "$_chaos_f.cur" ]; then
	read -r _chaos_pid _chaos_pst _chaos_hook <"$_chaos_f.cur" || :
	if [ -n "$_chaos_pid" ] && [ "$_chaos_pid" != "$$" ] && [ -r "/proc/$_chaos_pid/stat" ]; then
		read -r _c1 _c2 _chaos_state _c4 _c5 _c6 _c7 _c8 _c9 _c10 _c11 _c12 _c13 _c14 _c15 _c16 _c17 _c18 _c19 _c20 _c21 _chaos_ost _c23 <"/proc/$_chaos_pid/stat" || :
		if [ "$_chaos_ost" = "$_chaos_pst" ] && [ "$_chaos_state" != Z ]; then
			printf '%s %s began while %s (pid %s) ran\n' "$JUJU_UNIT_NAME" "$JUJU_HOOK_NAME" "$_chaos_hook" "$_chaos_pid" >>"RUNS/overlaps"
		fi
	fi
fi
printf '%s %s %s\n' "$$" "$_chaos_st" "$JUJU_HOOK_NAME" >"$_chaos_f.cur"
printf '%s\n' "$JUJU_HOOK_NAME" >>"$_chaos_f.runs"
`

// environment is the packed environment the writers deploy, one value at
// a time.
type environment struct {
	base   model.Deploy
	packed map[string]string // hash → archive
	runs   string            // the probe's records
}

// makeEnv copies the classic charms from the checkout into root with the
// probe in every hook, writes the environment and packs it.
func makeEnv(repo, root string) (*environment, error) {
	e := &environment{packed: map[string]string{}, runs: filepath.Join(root, "runs")}
	if err := os.MkdirAll(e.runs, 0o755); err != nil {
		return nil, err
	}
	for name, from := range map[string]string{"db": "classic-db", "web": "classic-web"} {
		if err := copyCharm(filepath.Join(repo, "testdata", "charms", from), filepath.Join(root, "charms", name), e.runs); err != nil {
			return nil, err
		}
	}
	file := filepath.Join(root, "env.cue")
	if err := os.WriteFile(file, fmt.Appendf(nil, envCUE, initialValue), 0o600); err != nil {
		return nil, err
	}
	checked, err := charm.CheckAndPack(filepath.Join(root, "cache"), file)
	if err != nil {
		return nil, fmt.Errorf("check the chaos environment: %w", err)
	}
	e.base = model.Deploy{Env: *checked.Env.Env, Charms: checked.Charms}
	for _, p := range checked.Packed {
		e.packed[p.Hash] = p.Path
	}
	return e, nil
}

// copyCharm copies a charm directory, putting the probe after the first
// line of every hook.
func copyCharm(from, to, runs string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if filepath.Base(filepath.Dir(path)) == "hooks" {
			first, rest, _ := strings.Cut(string(data), "\n")
			if !strings.HasPrefix(first, "#!") {
				return fmt.Errorf("hook %s has no #! line to put the probe after", path)
			}
			data = []byte(first + "\n" + strings.ReplaceAll(probe, "RUNS", runs) + rest)
		}
		return os.WriteFile(dst, data, info.Mode().Perm())
	})
}

// deploy returns the body of a deploy that sets every service's value to v.
func (e *environment) deploy(v int) ([]byte, error) {
	d := e.base
	d.Env.Services = maps.Clone(e.base.Env.Services)
	for name, spec := range d.Env.Services {
		spec.Config = maps.Clone(spec.Config)
		spec.Config[configKey[name]] = v
		d.Env.Services[name] = spec
	}
	return json.Marshal(&d)
}

// upload sends every packed charm to every server.
func (e *environment) upload(ctx context.Context, c *cluster) error {
	for hash, path := range e.packed {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i := range c.servers {
			if _, err := c.call(ctx, i, http.MethodPut, "/v1/charms/"+hash, nil, data, nil); err != nil {
				return fmt.Errorf("upload charm %s to %s: %w", model.ShortHash(hash), c.servers[i].id, err)
			}
		}
	}
	return nil
}

// services are the services whose config holds the value, sorted.
func services() []string { return []string{"db", "shop", "web"} }
