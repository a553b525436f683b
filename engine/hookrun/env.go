package hookrun

import "os"

// DefaultPath is the PATH a hook gets when the agent has none.
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// inherited names the only variables of the agent's own environment a hook
// sees. Everything else the agent inherited — FIXPOINT_TOKEN, a join token,
// cloud credentials the operator exported for it — stays out: a hook is
// charm code, and a charm must not be able to act as the agent or the
// operator (issue 14, item 2).
var inherited = []string{"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR"}

// BaseEnv returns the variables a hook inherits from the agent: PATH (or
// DefaultPath), and HOME, LANG, LC_ALL and TMPDIR where the agent has them.
// The caller adds the hook's own documented values (FIXPOINT_UNIT, the
// JUJU_* context, ...) after these.
func BaseEnv() []string {
	env := make([]string, 0, len(inherited))
	for _, k := range inherited {
		v, ok := os.LookupEnv(k)
		if k == "PATH" && v == "" {
			v, ok = DefaultPath, true
		}
		if ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}
