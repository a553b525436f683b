// Package legacy runs old charms, written as Juju-style install,
// config-changed, <rel>-relation-joined, ... hooks, unchanged inside one
// reconcile call.
//
// Run executes the hooks named by the universe's derived events, in order,
// with Juju's hook environment and the Juju hook tools (relation-get,
// relation-set, config-get, ...). The tools are the fixpoint binary under
// the tools' names (busybox style): ToolMain is their client side, which
// talks to the session Run serves over a per-run unix socket authenticated
// by a random token. What the hooks wrote becomes the reconcile's Result,
// and only if every hook exited 0, as in Juju, where a hook's relation
// settings are committed only when it succeeds.
package legacy
