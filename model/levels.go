package model

import (
	"fmt"
	"slices"
	"strings"
)

// Level is a build's feature level: which entry kinds, and which fields of
// them, the build applies. A leader proposes an entry only when every
// server of the cluster applies it (raftstore's gate), because a replica
// that refused it, or applied it without a field it does not know, would
// hold another state than the others without anyone noticing.
type Level int

// The levels. A new entry kind, or a new field whose absence an older
// build would misread, takes the next level: add a constant, a row to
// features, and raise BuildLevel.
const (
	// LevelBase is what release v0.3.0 applies: every kind it knows. A
	// node that advertises no level runs it.
	LevelBase Level = 1
	// LevelRecorded records the cluster's level in the log (raftstore's
	// cluster-level entry), and wraps every entry that needs a level
	// above the base in an envelope naming that level, so that a build
	// that meets a level it does not have stops instead of guessing. The
	// Juju hook tools' fields of the same release (machine ids, the
	// trusted credential, juju-reboot, ports scoped to endpoints) come
	// with it.
	LevelRecorded Level = 2

	// BuildLevel is this build's level: the highest row of features.
	BuildLevel = LevelRecorded
)

// Feature is one row of the level table: an entry kind, or a field of
// one, and the level from which every node applies it.
type Feature struct {
	// Kind names the entry: "command:<op>" for a model command,
	// "raft:<name>" for raftstore's own bookkeeping.
	Kind string `json:"kind"`
	// Field is the JSON name of a field of Kind that needs more than the
	// kind itself; "" for the kind.
	Field string `json:"field,omitempty"`
	Level Level  `json:"level"`
	// What says what the row is, for the docs.
	What string `json:"what"`
	// set reports whether a command carries Field (field rows of command
	// kinds only).
	set func(*Command) bool
}

// Kinds of raftstore's own entries, as the table names them.
const (
	KindRegister     = "raft:register"
	KindForget       = "raft:forget"
	KindReplace      = "raft:replace"
	KindClusterLevel = "raft:cluster-level"
	KindLeveled      = "raft:leveled"
)

// CommandKind is the table's name of a command's kind.
func CommandKind(op Op) string { return "command:" + string(op) }

// features is the table. Rows are never removed: a node of any level
// reads the log from its start.
var features = []Feature{
	{Kind: CommandKind(OpDeploy), Level: LevelBase, What: "deploy an environment"},
	{Kind: CommandKind(OpMachine), Level: LevelBase, What: "register a machine"},
	{Kind: CommandKind(OpResults), Level: LevelBase, What: "units' reconcile results"},
	{Kind: CommandKind(OpResolve), Level: LevelBase, What: "mark a unit's error resolved"},
	{Kind: CommandKind(OpLiveness), Level: LevelBase, What: "machines' liveness"},
	{Kind: CommandKind(OpAuth), Level: LevelBase, What: "credentials"},
	{Kind: CommandKind(OpReset), Level: LevelBase, What: "reset a machine"},
	{Kind: CommandKind(OpJoin), Level: LevelBase, What: "agent join tokens"},
	{Kind: CommandKind(OpLimits), Level: LevelBase, What: "the environment's limits"},
	{Kind: CommandKind(OpLogs), Level: LevelBase, What: "debug-log lines"},
	{Kind: CommandKind(OpEnqueue), Level: LevelBase, What: "enqueue an action"},
	{Kind: CommandKind(OpStart), Level: LevelBase, What: "start an action"},
	{Kind: CommandKind(OpFinish), Level: LevelBase, What: "finish an action"},
	{Kind: CommandKind(OpClusterKey), Level: LevelBase, What: "rotate the cluster key"},
	{Kind: CommandKind(OpSecretDue), Level: LevelBase, What: "secrets' rotations and expiries due"},
	{Kind: KindRegister, Level: LevelBase, What: "a server's addresses"},
	{Kind: KindForget, Level: LevelBase, What: "forget a removed server"},
	{Kind: KindReplace, Level: LevelBase, What: "restore a backup"},
	{Kind: CommandKind(OpMachine), Field: "number", Level: LevelRecorded, What: "give a machine its Juju id (JUJU_MACHINE_ID)",
		set: func(c *Command) bool { return c.Machine != nil && c.Machine.Number }},
	{Kind: CommandKind(OpMachine), Field: "labels", Level: LevelRecorded, What: "a machine's labels (fixpoint agent --label)",
		set: func(c *Command) bool { return c.Machine != nil && len(c.Machine.Labels) > 0 }},
	{Kind: CommandKind(OpDeploy), Field: "placement", Level: LevelRecorded, What: "an environment's placement: the machines, or the labels, its units go on",
		set: func(c *Command) bool { return c.Deploy != nil && c.Deploy.Env.Placement != nil }},
	{Kind: CommandKind(OpDeploy), Field: "credential", Level: LevelRecorded, What: "an environment's cloud credential (credential-get)",
		set: func(c *Command) bool { return c.Deploy != nil && c.Deploy.Env.Credential != nil }},
	{Kind: CommandKind(OpDeploy), Field: "trust", Level: LevelRecorded, What: "a service trusted with the credential (deploy --trust)",
		set: deploysTrusted},
	{Kind: CommandKind(OpDeploy), Field: "expose", Level: LevelRecorded, What: "a service exposed (juju expose)",
		set: func(c *Command) bool { return deploysAny(c, func(s ServiceSpec) bool { return s.Expose }) }},
	{Kind: CommandKind(OpDeploy), Field: "channel", Level: LevelRecorded, What: "the charm channel and revision a service was deployed from (deploy --channel, --revision)",
		set: func(c *Command) bool {
			return deploysAny(c, func(s ServiceSpec) bool { return s.Channel != "" || s.Revision != nil })
		}},
	{Kind: CommandKind(OpDeploy), Field: "model_config", Level: LevelRecorded, What: "the environment's model config (juju model-config update-status-hook-interval)",
		set: func(c *Command) bool { return c.Deploy != nil && len(c.Deploy.Env.ModelConfig) > 0 }},
	{Kind: CommandKind(OpDeploy), Field: "record", Level: LevelRecorded, What: "keep the environment's document as applied (GET /v1/env, fixpoint export)",
		set: func(c *Command) bool { return c.Deploy != nil && c.Deploy.Record }},
	{Kind: CommandKind(OpDeploy), Field: "remove_units", Level: LevelRecorded, What: "remove the units named, not the newest (fixpoint remove-unit UNIT)",
		set: func(c *Command) bool { return c.Deploy != nil && len(c.Deploy.RemoveUnits) > 0 }},
	{Kind: CommandKind(OpResults), Field: "reboot", Level: LevelRecorded, What: "a unit's juju-reboot and the boots it has seen",
		set: func(c *Command) bool {
			return anyResult(c, func(r *Result) bool { return r.Reboot || r.Seen != nil && r.Seen.Boot > 0 })
		}},
	{Kind: CommandKind(OpResults), Field: "ports", Level: LevelRecorded, What: "a port opened for chosen endpoints (open-port --endpoints)",
		set: func(c *Command) bool { return anyResult(c, scopesPorts) }},
	{Kind: CommandKind(OpFinish), Field: "ports", Level: LevelRecorded, What: "an operation's port opened for chosen endpoints",
		set: func(c *Command) bool { return anyResult(c, scopesPorts) }},
	// The cluster-level entry also gives the default environment its uuid
	// (env_uuid): a field of a kind of this same level.
	{Kind: KindClusterLevel, Level: LevelRecorded, What: "raise the cluster's feature level (fixpoint cluster upgrade); at 2 the environment's document is made from the state"},
	{Kind: KindLeveled, Level: LevelRecorded, What: "an entry that names the level it needs"},
	{Kind: CommandKind(OpEnvAdd), Level: LevelRecorded, What: "make an environment (fixpoint env add)"},
	{Kind: CommandKind(OpEnvRemove), Level: LevelRecorded, What: "drop an emptied environment (fixpoint env remove)"},
	{Kind: CommandKind(OpEnvRemove), Field: "force", Level: LevelRecorded, What: "drop an environment whose remaining units are all on lost machines (fixpoint env remove --force)",
		set: func(c *Command) bool { return c.EnvRemove != nil && c.EnvRemove.Force }},
	{Kind: CommandKind(OpTokenCreate), Level: LevelRecorded, What: "an environment's token (fixpoint token create --env)"},
	{Kind: CommandKind(OpTokenRevoke), Level: LevelRecorded, What: "revoke an environment's token"},
	{Kind: CommandKind(OpLimits), Field: "environments", Level: LevelRecorded, What: "the cluster's limit on environments",
		set: func(c *Command) bool { return c.Limits != nil && c.Limits.Environments != 0 }},
	{Kind: CommandKind(OpLogs), Field: "lines.env", Level: LevelRecorded, What: "a debug-log line of a unit of an environment other than the default",
		set: func(c *Command) bool {
			return c.Logs != nil && slices.ContainsFunc(c.Logs.Lines, func(l LogLine) bool { return l.Env != "" })
		}},
}

func init() {
	// A command of any environment but the default names it (Command.Env):
	// a build that ignored the field would apply it to the default one.
	for _, op := range []Op{OpDeploy, OpResults, OpResolve, OpEnqueue, OpStart, OpFinish, OpSecretDue} {
		features = append(features, Feature{Kind: CommandKind(op), Field: "env", Level: LevelRecorded,
			What: string(op) + " of an environment other than the default",
			set:  func(c *Command) bool { return c.Env != "" }})
	}
	// Secrets' wall-clock times: a build that ignored the field would
	// record none.
	for _, op := range []Op{OpDeploy, OpResults, OpFinish} {
		features = append(features, Feature{Kind: CommandKind(op), Field: "secret_times", Level: LevelRecorded,
			What: "record when the secrets a " + string(op) + " makes or changes were made and updated (juju secrets)",
			set:  func(c *Command) bool { return c.SecretTimes }})
	}
}

// deploysTrusted reports whether a deploy trusts a service with the
// credential.
func deploysTrusted(c *Command) bool {
	if c.Deploy == nil {
		return false
	}
	for _, svc := range c.Deploy.Env.Services {
		if svc.Trust {
			return true
		}
	}
	return false
}

// deploysAny reports whether a deploy declares a service of which is
// true.
func deploysAny(c *Command, is func(ServiceSpec) bool) bool {
	if c.Deploy == nil {
		return false
	}
	for _, svc := range c.Deploy.Env.Services {
		if is(svc) {
			return true
		}
	}
	return false
}

// anyResult reports whether one of c's results, or the one its finished
// operation wrote, holds what is asked.
func anyResult(c *Command, is func(*Result) bool) bool {
	for i := range c.Results {
		if is(&c.Results[i]) {
			return true
		}
	}
	return c.Finish != nil && c.Finish.Writes != nil && is(c.Finish.Writes)
}

// scopesPorts reports whether r opens a port for chosen endpoints.
func scopesPorts(r *Result) bool {
	for _, p := range r.Ports {
		if _, _, scoped := SplitPortEndpoint(p); scoped {
			return true
		}
	}
	return false
}

// Features returns the level table, for docs and status.
func Features() []Feature { return slices.Clone(features) }

// KindLevel is the level a kind of entry needs, and false for a kind this
// build does not know.
func KindLevel(kind string) (Level, bool) {
	for _, f := range features {
		if f.Kind == kind && f.Field == "" {
			return f.Level, true
		}
	}
	return 0, false
}

// Level is the level c needs: its kind's, raised by every field row whose
// field c carries; false when this build does not know c's op.
func (c *Command) Level() (Level, bool) {
	kind := CommandKind(c.Op)
	need, ok := KindLevel(kind)
	if !ok {
		return 0, false
	}
	for _, f := range features {
		if f.Kind == kind && f.set != nil && f.set(c) {
			need = max(need, f.Level)
		}
	}
	return need, true
}

// NodeLevel is what one server of the cluster advertised about its build.
type NodeLevel struct {
	ID string `json:"id"`
	// Version is the server's build (module version and commit); "" for
	// a build that predates levels, or a server that did not answer.
	Version string `json:"version,omitempty"`
	// Level is its build's feature level; LevelBase for a build that
	// advertises none, 0 when the server did not answer.
	Level Level `json:"level"`
	// Halted says why the server stopped applying the log, if it did.
	Halted string `json:"halted,omitempty"`
	// Memory is the server's memory condition (under pressure, its
	// intake slowed), "" when nothing is wrong.
	Memory string `json:"memory,omitempty"`
}

// ClusterLevel is the feature levels of a cluster: the level its log has
// reached and what each server runs.
type ClusterLevel struct {
	// Level is the cluster's level, as the log records it: no server
	// below it applies every entry.
	Level Level       `json:"level"`
	Nodes []NodeLevel `json:"nodes"`
	// Mixed says the servers run builds of different levels, as during a
	// rolling upgrade.
	Mixed bool `json:"mixed,omitempty"`
	// Warnings say what the operator should do, one line each.
	Warnings []string `json:"warnings,omitempty"`
}

// Assess fills Mixed and Warnings from Level and Nodes.
func (c *ClusterLevel) Assess() {
	c.Mixed, c.Warnings = false, nil
	lowest, known := Level(0), 0
	for _, n := range c.Nodes {
		if n.Memory != "" {
			c.Warnings = append(c.Warnings, fmt.Sprintf("node %s is %s: give it more memory (--memory-limit, its cgroup) or fewer units", n.ID, n.Memory))
		}
		switch {
		case n.Halted != "":
			c.Warnings = append(c.Warnings, fmt.Sprintf("node %s stopped applying the log: %s", n.ID, n.Halted))
		case n.Level == 0:
			c.Warnings = append(c.Warnings, fmt.Sprintf("node %s did not say its feature level (not answering)", n.ID))
			continue
		case n.Level < c.Level:
			c.Warnings = append(c.Warnings, fmt.Sprintf("node %s runs feature level %d, below the cluster's %d: it cannot apply the log; start it on a build of level %d or later", n.ID, n.Level, c.Level, c.Level))
		}
		if known > 0 && n.Level != lowest {
			c.Mixed = true
		}
		if known == 0 || n.Level < lowest {
			lowest = n.Level
		}
		known++
	}
	var behind []string
	for _, n := range c.Nodes {
		if n.Level > 0 && n.Level < c.highest() {
			behind = append(behind, fmt.Sprintf("%s (level %d)", n.ID, n.Level))
		}
	}
	switch {
	case c.Mixed:
		c.Warnings = append(c.Warnings, fmt.Sprintf("mixed cluster: %s still run an older build; upgrade them (followers first, then the leader)", strings.Join(behind, ", ")))
	case known == len(c.Nodes) && known > 0 && lowest > c.Level:
		c.Warnings = append(c.Warnings, fmt.Sprintf("every server runs feature level %d but the cluster's level is %d: run fixpoint cluster upgrade to use the new features (no server can go back to an older build after it)", lowest, c.Level))
	}
}

// highest is the highest level a server advertised.
func (c *ClusterLevel) highest() Level {
	h := Level(0)
	for _, n := range c.Nodes {
		h = max(h, n.Level)
	}
	return h
}
