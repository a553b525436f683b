package legacy

import (
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/hookrun"
)

// runEnv is what every hook of one Run shares in its environment.
type runEnv struct {
	base     []string // hookrun.BaseEnv plus Options.Env: never the agent's whole environment
	unit     string
	machine  string
	model    string
	uuid     string
	zone     string
	princ    string
	charmDir string
	unitDir  string
	toolsDir string
	socket   string
	token    string
	storage  []charmapi.Storage // the unit's instances, for storage hooks
}

// hookEnv is the environment of one hook: Juju's variables for the unit,
// the hook and its relation (research/juju.md §1.3), the tool socket, and
// PATH with the hook tools first.
func (r *runEnv) hookEnv(ev charmapi.Event, contextID string) []string {
	env := map[string]string{}
	for _, kv := range r.base {
		k, v, ok := strings.Cut(kv, "=")
		// Nothing Juju-shaped leaks in from the agent's own environment:
		// a hook sees only its own context.
		if !ok || strings.HasPrefix(k, "JUJU_") || k == "CHARM_DIR" || k == EnvSocket || k == EnvToken || k == EnvUnitDir {
			continue
		}
		env[k] = v
	}
	path := env["PATH"]
	if path == "" {
		path = hookrun.DefaultPath
	}
	env["PATH"] = r.toolsDir + string(os.PathListSeparator) + path
	env["JUJU_UNIT_NAME"] = r.unit
	env["JUJU_MODEL_NAME"] = r.model
	env["JUJU_MACHINE_ID"] = r.machine
	env["JUJU_PRINCIPAL_UNIT"] = r.princ
	env["JUJU_CHARM_DIR"] = r.charmDir
	env["CHARM_DIR"] = r.charmDir
	env["JUJU_HOOK_NAME"] = ev.Hook
	// What ops needs to run at all: the event comes from the dispatch
	// path, and a version below 2.7 (or none) turns features off.
	env["JUJU_DISPATCH_PATH"] = "hooks/" + ev.Hook
	env["JUJU_VERSION"] = JujuVersion
	env["JUJU_MODEL_UUID"] = r.uuid
	env["JUJU_AVAILABILITY_ZONE"] = r.zone
	env[EnvContext] = contextID
	env[EnvSocket] = r.socket
	env[EnvToken] = r.token
	env[EnvUnitDir] = r.unitDir
	if ev.Storage != "" {
		storageEnv(env, r.storage, ev.Storage)
	}
	if ev.Relation != "" {
		endpoint, _, _ := strings.Cut(ev.Relation, ":")
		env["JUJU_RELATION"] = endpoint
		env["JUJU_RELATION_ID"] = ev.Relation
		env["JUJU_REMOTE_APP"] = ev.RemoteApp
		// Juju leaves JUJU_REMOTE_UNIT out of -created and -broken, and
		// empty for a change of the remote app's bag.
		if ev.RemoteUnit != "" {
			env["JUJU_REMOTE_UNIT"] = ev.RemoteUnit
		}
		if ev.Departing != "" {
			env["JUJU_DEPARTING_UNIT"] = ev.Departing
		}
	}
	if ev.Secret != "" {
		// As Juju's uniter sets them (runner/context): the revision only
		// for secret-remove and secret-expired.
		env["JUJU_SECRET_ID"] = ev.Secret
		if ev.SecretLabel != "" {
			env["JUJU_SECRET_LABEL"] = ev.SecretLabel
		}
		if ev.SecretRevision != 0 {
			env["JUJU_SECRET_REVISION"] = strconv.Itoa(ev.SecretRevision)
		}
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
