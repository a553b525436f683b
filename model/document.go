package model

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The environment's document is the Environment its last deploy carried,
// as written (charm paths, config as set, relation names, where secrets
// are read) with the charm hashes and resource digests the CLI filled in.
// It holds no secret value but what an operator wrote as the value of a
// config option of type secret, which readers get redacted
// (RedactDocument). `fixpoint export` reads it, and edits by command
// read it, change it and deploy it back against its revision (EnvIndex).

// ErrNoEnvironment answers a read of the document before any deploy.
var ErrNoEnvironment = fmt.Errorf("%w: no environment applied yet; run fixpoint apply -f FILE", ErrNotFound)

// DocumentGapsError says which parts of a document applied before the
// cluster recorded documents cannot be read back from the state.
type DocumentGapsError struct {
	Gaps []string
}

func (e *DocumentGapsError) Error() string {
	return "the environment was applied before the cluster recorded its document, and the state does not hold all of it: " +
		strings.Join(e.Gaps, "; ") + "; apply the environment file once (fixpoint apply -f FILE) to record it"
}

// EnvDocument is the environment's document: the one recorded, or one
// made from the state (SynthesizeDocument) when none is. It is
// ErrNoEnvironment before any deploy, and a *DocumentGapsError when the
// state lacks a part of it. The document returned is shared: read it only.
func (s *State) EnvDocument() (*Environment, error) {
	if s.Document != nil {
		return s.Document, nil
	}
	if s.EnvIndex == 0 {
		return nil, ErrNoEnvironment
	}
	return s.SynthesizeDocument()
}

// keepDocument keeps the document of an accepted deploy d: its
// environment when it asks to be recorded, else, once a document is
// kept, one made from the state, so that the document always says what
// the environment is.
func (s *State) keepDocument(d *Deploy) {
	switch {
	case d.Record:
		s.Document = cloneEnvironment(&d.Env)
	case s.Document != nil:
		s.Document, _ = s.SynthesizeDocument()
	}
}

// AdoptDocument makes the document of an environment deployed before the
// cluster recorded documents from the state, when the state holds all of
// it: the cluster's level rose to LevelRecorded (or a backup was restored
// into a cluster at that level). It changes nothing when a document is
// kept, or before any deploy.
func (s *State) AdoptDocument() {
	if s.Document != nil || s.EnvIndex == 0 {
		return
	}
	if env, err := s.SynthesizeDocument(); err == nil {
		s.Document = env
	}
}

// cloneEnvironment is a deep copy of env, in the form a decoded command
// has (config numbers as float64), so that every replica keeps the same.
func cloneEnvironment(env *Environment) *Environment {
	data, err := json.Marshal(env)
	if err != nil {
		// An environment is plain data decoded from JSON.
		return nil
	}
	out := &Environment{}
	if err := json.Unmarshal(data, out); err != nil {
		return nil
	}
	return out
}

// SynthesizeDocument makes the environment's document from the state:
// services with their charm (path as packed, hash), unit count, config
// other than the charm's defaults, placement, storage, trust and resource
// digests (the resource files' paths are not kept: ""); relations, named
// after their services; the credential. User secrets are named, granted
// and described in the state, but where their values are read is not:
// an environment that declares one yields a *DocumentGapsError naming
// it, as does a credential whose secret is gone.
func (s *State) SynthesizeDocument() (*Environment, error) {
	env := &Environment{APIVersion: APIVersion, Name: s.Name, Services: map[string]ServiceSpec{}}
	var gaps []string
	secretName := map[string]string{} // user secret id -> name
	for _, id := range sortedKeys(s.Secrets) {
		if sec := s.Secrets[id]; sec.OwnerKind == SecretOwnerUser {
			secretName[id] = sec.Label
			gaps = append(gaps, fmt.Sprintf("secrets.%s.content: where its values are read (files, environment variables) was not kept", sec.Label))
		}
	}
	for _, name := range sortedKeys(s.Services) {
		svc := s.Services[name]
		if svc.Life != Alive {
			continue
		}
		env.Services[name] = s.serviceSpec(svc, secretName)
	}
	if rels := s.relationSpecs(); len(rels) > 0 {
		env.Relations = rels
	}
	env.ModelConfig = s.modelConfigSpec()
	if c := s.Credential; c != nil {
		spec := &CredentialSpec{Type: c.Type, Name: c.Name, Region: c.Region, Endpoint: c.Endpoint, AuthType: c.AuthType, Secret: secretName[c.SecretID]}
		if spec.Secret == "" && c.SecretID != "" {
			gaps = append(gaps, "credential.secret: the user secret holding its attributes is gone")
		}
		env.Credential = spec
	}
	if p := s.Placement; p != nil {
		env.Placement = &EnvPlacement{Machines: slices.Clone(p.Machines), Labels: maps.Clone(p.Labels)}
	}
	if len(gaps) > 0 {
		return env, &DocumentGapsError{Gaps: gaps}
	}
	return env, nil
}

// serviceSpec is the declaration of svc the state holds.
func (s *State) serviceSpec(svc *Service, secretName map[string]string) ServiceSpec {
	spec := ServiceSpec{CharmHash: svc.Charm, Placement: slices.Clone(svc.Placement), Trust: svc.Trust, Expose: svc.Exposed}
	var opts map[string]Option
	if ch := s.Charms[svc.Charm]; ch != nil {
		spec.Charm, opts = ch.Source, ch.Meta.Options
	}
	if !svc.Subordinate {
		n := svc.Units
		spec.Units = &n
	}
	for _, k := range sortedKeys(svc.Config) {
		o, ok := opts[k]
		v := svc.Config[k]
		if !ok || isDefault(o, v) {
			continue
		}
		if str, isStr := v.(string); isStr && SecretOption(o) {
			if name, ok := secretName[strings.TrimPrefix(str, "secret:")]; ok && strings.HasPrefix(str, "secret:") {
				v = "secret:" + name
			}
		}
		if spec.Config == nil {
			spec.Config = map[string]any{}
		}
		spec.Config[k] = v
	}
	if len(svc.Resources) > 0 {
		spec.ResourceDigests = maps.Clone(svc.Resources)
		spec.Resources = map[string]string{}
		for n := range svc.Resources {
			spec.Resources[n] = ""
		}
	}
	if len(svc.Storage) > 0 {
		spec.Storage = map[string]StorageSpec{}
		for n, c := range svc.Storage {
			spec.Storage[n] = StorageSpec{Count: &c}
		}
	}
	return spec
}

// isDefault reports whether v is option o's default value.
func isDefault(o Option, v any) bool {
	if o.Default == nil {
		return false
	}
	d, err := ConvertOption(o.Type, o.Default)
	if err != nil {
		return false
	}
	c, err := ConvertOption(o.Type, v)
	return err == nil && c == d
}

// relationSpecs declares the alive relations between two services, each
// named after its services (and endpoints, or its id, where that name is
// taken or not a name): the state keeps no relation's name.
func (s *State) relationSpecs() map[string][]string {
	out := map[string][]string{}
	for _, id := range s.SortedRelations() {
		r := s.Relations[id]
		if r.Life != Alive || len(r.Endpoints) != 2 {
			continue
		}
		a, b := r.Endpoints[0], r.Endpoints[1]
		name := a.Service + "-" + b.Service
		if _, taken := out[name]; taken || CheckName(KindRelation, name) != nil {
			name = fmt.Sprintf("%s-%s-%d", a.Service, b.Service, r.ID)
		}
		if _, taken := out[name]; taken || CheckName(KindRelation, name) != nil {
			name = fmt.Sprintf("relation-%d", r.ID)
		}
		out[name] = []string{a.String(), b.String()}
	}
	return out
}

// redactedPrefix starts every value Redact makes.
const redactedPrefix = "<redacted sha256:"

// RedactDocument is env as people who may not see secret values read it:
// the values of config options of type secret redacted (Redact), but for
// references to secrets ("secret:NAME"), which say where a value is read,
// not what it is. charms are the charms env names, by hash. env itself is
// never changed.
func RedactDocument(env *Environment, charms map[string]*Charm) *Environment {
	out := *env
	out.Services = make(map[string]ServiceSpec, len(env.Services))
	for name, spec := range env.Services {
		ch := charms[spec.CharmHash]
		config, cloned := spec.Config, false
		for k, v := range spec.Config {
			if ch == nil || !SecretOption(ch.Meta.Options[k]) || v == nil {
				continue
			}
			if str, ok := v.(string); ok && strings.HasPrefix(str, "secret:") {
				continue
			}
			if !cloned {
				config, cloned = maps.Clone(spec.Config), true
			}
			config[k] = RedactAny(v)
		}
		spec.Config = config
		out.Services[name] = spec
	}
	return &out
}

// Unredact gives back, in env (a deploy's environment, about to be
// planned or proposed), the value of each config option of type secret
// that reads as the redaction of the value the service has now: a
// document read redacted (RedactDocument) and deployed back keeps its
// secret values. charms are the deploy's charms, by hash.
func (s *State) Unredact(env *Environment, charms map[string]*Charm) {
	for name, spec := range env.Services {
		svc, ch := s.Services[name], charms[spec.CharmHash]
		if svc == nil || ch == nil {
			continue
		}
		for k, v := range spec.Config {
			str, ok := v.(string)
			if !ok || !strings.HasPrefix(str, redactedPrefix) || !SecretOption(ch.Meta.Options[k]) {
				continue
			}
			if cur, ok := svc.Config[k]; ok && cur != nil && RedactAny(cur) == str {
				spec.Config[k] = cur
			}
		}
	}
}
