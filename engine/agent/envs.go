package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/hookrun"
	"github.com/fixpoint/fixpoint/engine/legacy"
	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// The agent runs the units of every environment placed on its machine
// (docs/environments.md, part B). The default environment's units live
// where they always have, under the data dir (units/, storage/, locks/),
// so an upgrade moves nothing; another environment's live under
// envs/<env>/ with the same layout, so two environments' db/0 never share
// a directory, a lock or storage. Charms and resources are cached by
// content hash and shared. An environment's directory goes once the
// control plane says the environment is gone, which it is only after
// every unit of it ran its dying hooks and was reported.

// envsDir holds the directories of the environments other than the
// default one.
const envsDir = "envs"

// envRoot is where environment env's units, storage and locks live: the
// data dir for the default environment (""), envs/<env> for another. A
// name that is not an environment's is refused, so that no work names a
// path outside the data dir.
func (a *Agent) envRoot(env string) (string, error) {
	if env == "" {
		return a.cfg.DataDir, nil
	}
	if err := model.CheckName(model.KindEnv, env); err != nil {
		return "", fmt.Errorf("work of environment %s: %w", model.Quote(env, 72), err)
	}
	return filepath.Join(a.cfg.DataDir, envsDir, env), nil
}

// unitDir is the directory of unit of environment env.
func (a *Agent) unitDir(env, unit string) (string, error) {
	root, err := a.envRoot(env)
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "units", strings.ReplaceAll(unit, "/", "-")), nil
}

// lockUnit takes w's unit's run lock, kept in its environment's
// directory.
func (a *Agent) lockUnit(ctx context.Context, w wire.Work) (*hookrun.UnitLock, error) {
	root, err := a.envRoot(w.Env)
	if err != nil {
		return nil, err
	}
	return hookrun.LockUnit(ctx, root, w.Unit)
}

// endLeftovers ends what runs of a previous agent left running, in every
// environment's directory.
func (a *Agent) endLeftovers() error {
	errs := []error{hookrun.EndLeftovers(a.cfg.DataDir)}
	envs, err := a.envDirs()
	errs = append(errs, err)
	for _, env := range envs {
		errs = append(errs, hookrun.EndLeftovers(filepath.Join(a.cfg.DataDir, envsDir, env)))
	}
	return errors.Join(errs...)
}

// envDirs lists the environments this machine keeps a directory of.
func (a *Agent) envDirs() ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(a.cfg.DataDir, envsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list the environments' directories: %w", err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && model.CheckName(model.KindEnv, e.Name()) == nil {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// hookEnv is what every hook and operation of w's unit finds in its
// environment: the FIXPOINT_ variables and Juju's model name and uuid.
// The default environment's uuid is the one derived from its name, as
// hooks have always seen it; another environment's is its replicated
// uuid.
func (a *Agent) hookEnv(w wire.Work, charmDir string) []string {
	name, uuid := modelOf(w)
	return []string{
		"FIXPOINT_UNIT=" + w.Unit,
		"FIXPOINT_SERVICE=" + w.Universe.Service,
		"FIXPOINT_MACHINE=" + a.cfg.Machine,
		"FIXPOINT_CHARM_DIR=" + charmDir,
		"JUJU_MODEL_NAME=" + name,
		"JUJU_MODEL_UUID=" + uuid,
	}
}

// modelOf is w's environment's name and the uuid its hooks see.
func modelOf(w wire.Work) (name, uuid string) {
	name = w.Environment
	if name == "" {
		name = w.Env
	}
	if w.Env != "" && w.EnvUUID != "" {
		return name, w.EnvUUID
	}
	return name, legacy.ModelUUID(name)
}

// dying notes that a unit of env ran its dying universe: the next
// sweepHeartbeats heartbeats ask whether env is gone, so that its
// directory goes soon after the environment does (an `env remove`
// drops it right after its last unit's dying run is reported). Past
// them, the sweep of every environment's directory asks.
func (a *Agent) dying(env string) {
	if env == "" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.leaving == nil {
		a.leaving = map[string]int{}
	}
	a.leaving[env] = sweepHeartbeats
}

// sweepEnvs removes the directories of the environments the control
// plane no longer holds: those asked about (every environment directory
// when all, else those whose units ran their dying hooks). The answer
// comes from the latest committed state, so an environment that exists
// keeps its directory; without an answer nothing is removed.
func (a *Agent) sweepEnvs(ctx context.Context, all bool) {
	var ask []string
	if all {
		envs, err := a.envDirs()
		if err != nil {
			a.cfg.Log.Warn("could not list the environments of this machine's units", "error", err)
			return
		}
		ask = envs
	} else {
		a.mu.Lock()
		for env, beats := range a.leaving {
			ask = append(ask, env)
			if beats <= 1 {
				delete(a.leaving, env)
			} else {
				a.leaving[env] = beats - 1
			}
		}
		a.mu.Unlock()
	}
	if len(ask) == 0 {
		return
	}
	gone, err := a.client.EnvsGone(ctx, a.cfg.Machine, ask)
	if err != nil {
		if ctx.Err() == nil {
			a.cfg.Log.Warn("could not ask which environments are gone; their directories are kept and asked about again later", "error", err)
		}
		return
	}
	for _, env := range gone {
		a.removeEnv(env)
	}
}

// removeEnv removes environment env's directory once none of its units
// runs here.
func (a *Agent) removeEnv(env string) {
	root, err := a.envRoot(env)
	if err != nil || env == "" {
		return
	}
	a.mu.Lock()
	for key := range a.running {
		if e, _ := wire.SplitUnitKey(key); e == env {
			a.mu.Unlock()
			return
		}
	}
	delete(a.leaving, env)
	a.mu.Unlock()
	if _, err := os.Stat(root); err != nil {
		return
	}
	if err := os.RemoveAll(root); err != nil {
		a.cfg.Log.Warn("could not remove the directory of a removed environment", "env", env, "dir", root, "error", err)
		return
	}
	a.cfg.Log.Info("removed the directory of a removed environment", "env", env, "dir", root)
}

// universeInput is what w's reconcile hook reads: the universe as the
// server sent it, with its environment (Universe.Env) added as its last
// field, where encoding/json writes it, without decoding and encoding
// the rest again.
func universeInput(w wire.Work) ([]byte, error) {
	name, uuid := modelOf(w)
	raw := bytes.TrimSpace(w.UniverseJSON)
	if len(raw) == 0 || w.Universe.Env != nil {
		uni := *w.Universe
		if uni.Env == nil {
			uni.Env = &charmapi.Env{Name: name, UUID: uuid}
		}
		b, err := json.Marshal(&uni)
		if err != nil {
			return nil, fmt.Errorf("encode universe: %w", err)
		}
		return b, nil
	}
	if len(raw) < 2 || raw[0] != '{' || raw[len(raw)-1] != '}' {
		return nil, fmt.Errorf("universe of %s is not a JSON object", w.Unit)
	}
	env, err := json.Marshal(charmapi.Env{Name: name, UUID: uuid})
	if err != nil {
		return nil, fmt.Errorf("encode universe: %w", err)
	}
	out := make([]byte, 0, len(raw)+len(env)+8)
	out = append(out, raw[:len(raw)-1]...)
	if len(bytes.TrimSpace(raw[1:len(raw)-1])) > 0 {
		out = append(out, ',')
	}
	out = append(out, `"env":`...)
	out = append(out, env...)
	return append(out, '}'), nil
}
