package juju

import (
	"crypto/sha256"
	"fmt"
	"runtime"

	"github.com/fixpoint/fixpoint/engine/legacy"
)

// Version is the Juju release whose command line, output and hook
// environment fixpoint follows: what `juju version`, status's model
// version and every agent version report, and JUJU_VERSION in hooks.
const Version = legacy.JujuVersion

// Owner is the user every fixpoint model belongs to: the operator
// credential is the only user, as Juju's admin.
const Owner = "admin"

// CloudType is the cloud type a fixpoint model reports: Juju's manual
// cloud, whose machines are added by hand, is what fixpoint's registered
// agents are.
const CloudType = "manual"

// ModelUUID is the uuid of the model named name: the JUJU_MODEL_UUID its
// hooks see, derived from the name so that it stays the same across runs
// and restarts as a Juju model's does.
func ModelUUID(name string) string { return legacy.ModelUUID(name) }

// ControllerUUID is the uuid of the controller named name, derived from
// the name as ModelUUID is: fixpoint keeps no id of its cluster.
func ControllerUUID(name string) string {
	sum := sha256.Sum256([]byte("fixpoint controller\x00" + name))
	b := sum[:16]
	b[6] = b[6]&0x0f | 0x50 // version 5 (name-based)
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// ModelInfo is `juju show-model --format json`'s value for a model (and,
// with Access and LastConnection, an entry of `juju models`).
type ModelInfo struct {
	Name           string                   `json:"name" yaml:"name"`
	ShortName      string                   `json:"short-name" yaml:"short-name"`
	UUID           string                   `json:"model-uuid" yaml:"model-uuid"`
	ModelType      string                   `json:"model-type" yaml:"model-type"`
	ControllerUUID string                   `json:"controller-uuid" yaml:"controller-uuid"`
	ControllerName string                   `json:"controller-name" yaml:"controller-name"`
	IsController   bool                     `json:"is-controller" yaml:"is-controller"`
	Owner          string                   `json:"owner" yaml:"owner"`
	Cloud          string                   `json:"cloud" yaml:"cloud"`
	Type           string                   `json:"type" yaml:"type"`
	Life           string                   `json:"life" yaml:"life"`
	Status         StatusInfo               `json:"status" yaml:"status"`
	Users          map[string]ModelUser     `json:"users,omitempty" yaml:"users,omitempty"`
	Machines       map[string]ModelMachine  `json:"machines,omitempty" yaml:"machines,omitempty"`
	SecretBackends map[string]SecretBackend `json:"secret-backends,omitempty" yaml:"secret-backends,omitempty"`
	AgentVersion   string                   `json:"agent-version" yaml:"agent-version"`
	Access         string                   `json:"access,omitempty" yaml:"access,omitempty"`
	LastConnection string                   `json:"last-connection,omitempty" yaml:"last-connection,omitempty"`
}

// ModelUser is a user's access to a model.
type ModelUser struct {
	DisplayName    string `json:"display-name,omitempty" yaml:"display-name,omitempty"`
	Access         string `json:"access" yaml:"access"`
	LastConnection string `json:"last-connection" yaml:"last-connection"`
}

// ModelMachine is a machine's entry in show-model: its cores, which
// fixpoint does not record.
type ModelMachine struct {
	Cores int `json:"cores" yaml:"cores"`
}

// SecretBackend is a secret backend's entry in show-model: fixpoint keeps
// every secret in the control plane's Raft log, sealed, as Juju's
// internal backend keeps them in its database.
type SecretBackend struct {
	NumSecrets int    `json:"num-secrets" yaml:"num-secrets"`
	Status     string `json:"status" yaml:"status"`
}

// ModelSource is what show-model tells of a model.
type ModelSource struct {
	Name string
	// UUID is the model's uuid; "" derives it from the name (ModelUUID),
	// as the default environment's hooks see it.
	UUID       string
	Controller string
	// Machines are the Juju ids of its machines.
	Machines []string
	Secrets  int
}

// Model is show-model's value for src.
func Model(src ModelSource) ModelInfo {
	m := ModelInfo{
		Name: Owner + "/" + src.Name, ShortName: src.Name, UUID: ModelUUID(src.Name), ModelType: ModelType,
		ControllerUUID: ControllerUUID(src.Controller), ControllerName: src.Controller, Owner: Owner,
		Cloud: Cloud, Type: CloudType, Life: "alive", Status: StatusInfo{Current: "available"},
		Users:          map[string]ModelUser{Owner: {DisplayName: Owner, Access: "admin", LastConnection: "just now"}},
		SecretBackends: map[string]SecretBackend{"internal": {NumSecrets: src.Secrets, Status: "active"}},
		AgentVersion:   Version,
	}
	if src.UUID != "" {
		m.UUID = src.UUID
	}
	for _, id := range src.Machines {
		if m.Machines == nil {
			m.Machines = map[string]ModelMachine{}
		}
		m.Machines[id] = ModelMachine{}
	}
	return m
}

// Models is `juju models --format json`: the models and the current one.
type Models struct {
	Models  []ModelInfo `json:"models" yaml:"models"`
	Current string      `json:"current-model,omitempty" yaml:"current-model,omitempty"`
}

// VersionInfo is `juju version --format json --all`.
type VersionInfo struct {
	Version   string `json:"version" yaml:"version"`
	GitCommit string `json:"git-commit,omitempty" yaml:"git-commit,omitempty"`
	TreeState string `json:"git-tree-state,omitempty" yaml:"git-tree-state,omitempty"`
	Compiler  string `json:"compiler" yaml:"compiler"`
	GoVersion string `json:"go-version" yaml:"go-version"`
	Official  bool   `json:"official" yaml:"official"`
}

// Binary is the version string Juju prints: version, OS, architecture
// ("3.6.8-ubuntu-amd64"; fixpoint says linux, the OS it runs on, as
// Juju's binaries built for a non-Ubuntu host do).
func Binary() string { return Version + "-" + runtime.GOOS + "-" + runtime.GOARCH }

// Versions is `juju version --all` for a fixpoint built from commit.
func Versions(commit string, modified bool) VersionInfo {
	v := VersionInfo{Version: Binary(), GitCommit: commit, Compiler: runtime.Compiler, GoVersion: runtime.Version()}
	if commit != "" {
		v.TreeState = "clean"
		if modified {
			v.TreeState = "dirty"
		}
	}
	return v
}

// ModelConfigValue is one key of `juju model-config --format json`.
type ModelConfigValue struct {
	Value  any    `json:"Value" yaml:"value"`
	Source string `json:"Source" yaml:"source"`
}

// ModelConfig is `juju model-config --format json` for model name of
// uuid: its name, type and uuid, and update-status-hook-interval, the
// model's (interval, as written) or else the default.
func ModelConfig(name, uuid, interval, defaultInterval string) map[string]ModelConfigValue {
	out := map[string]ModelConfigValue{
		"name": {name, "model"}, "type": {CloudType, "model"}, "uuid": {uuid, "model"},
		"update-status-hook-interval": {defaultInterval, "default"},
	}
	if interval != "" {
		out["update-status-hook-interval"] = ModelConfigValue{interval, "model"}
	}
	return out
}
