// Package legacy runs old charms, written as Juju-style install,
// config-changed, <rel>-relation-joined, ... hooks, unchanged inside one
// reconcile call.
//
// Run executes the hooks named by the universe's derived events, in order,
// with Juju's hook environment and the Juju hook tools (relation-get,
// relation-set, config-get, ...). The tools are links named after them to
// cmd/fixpoint-hook, a small static program (package hooktool is its client
// side), or, where that cannot be had, to the fixpoint binary itself
// (ToolMain); see ToolsProgram. Either talks to the session Run serves over
// a per-run unix socket authenticated by a random token. What the hooks wrote becomes the reconcile's Result,
// and only if every hook exited 0, as in Juju, where a hook's relation
// settings are committed only when it succeeds.
package legacy
