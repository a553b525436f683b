package model

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// APIVersion is the only environment and universe version this build speaks.
const APIVersion = "fixpoint/v1"

// Environment is an environment as operators declare it, after CUE has
// evaluated it to plain data. The control plane receives it as JSON and
// checks it again with Resolve.
type Environment struct {
	APIVersion string                 `json:"apiVersion"`
	Name       string                 `json:"name"`
	Services   map[string]ServiceSpec `json:"services"`
	Relations  map[string][]string    `json:"relations,omitempty"`
	// Secrets are the user secrets by name (secrets_user.go): where
	// their values are read, never the values.
	Secrets map[string]UserSecretSpec `json:"secrets,omitempty"`
	// Credential is the cloud credential trusted services read
	// (credential.go).
	Credential *CredentialSpec `json:"credential,omitempty"`
	// ModelConfig are Juju's model-config settings fixpoint honours, by
	// key (modelconfig.go).
	ModelConfig map[string]string `json:"model_config,omitempty"`
	// Placement restricts the environment's units to some machines
	// (envplacement.go); without it they go on every machine.
	Placement *EnvPlacement `json:"placement,omitempty"`
}

// Expect is what `fixpoint charm test` requires of every unit of a
// service at the fixed point (an environment file's expect: section): its
// workload status, and its message when Message is set.
type Expect struct {
	Status  string  `json:"status"`
	Message *string `json:"message,omitempty"`
}

// ServiceSpec is one declared service.
type ServiceSpec struct {
	// Charm is the charm as written (a directory); CharmHash is filled in
	// when the CLI packs it.
	Charm     string         `json:"charm"`
	CharmHash string         `json:"charm_hash,omitempty"`
	Units     *int           `json:"units,omitempty"`
	Config    map[string]any `json:"config,omitempty"`
	Placement []string       `json:"placement,omitempty"`
	// Resources maps each resource the charm declares to its file, as
	// written; ResourceDigests is filled in with each file's sha256 when
	// the CLI reads it.
	Resources       map[string]string `json:"resources,omitempty"`
	ResourceDigests map[string]string `json:"resource_digests,omitempty"`
	// Storage sets per store how many instances each unit gets.
	Storage map[string]StorageSpec `json:"storage,omitempty"`
	// Trust lets the service's units read the environment's credential
	// (Juju's deploy --trust).
	Trust bool `json:"trust,omitempty"`
	// Expose records Juju's expose: shown in juju status; fixpoint opens
	// no firewall itself.
	Expose bool `json:"expose,omitempty"`
	// Channel and Revision are the charm store channel and revision the
	// service was deployed from (Juju's deploy --channel, --revision):
	// recorded in the document and shown by juju status, while the charm
	// itself is what Charm names (a repository NAME, found as it is).
	Channel  string `json:"channel,omitempty"`
	Revision *int   `json:"revision,omitempty"`
}

// maxChannel bounds a service's recorded charm channel, in bytes.
const maxChannel = 128

// Problem is one thing wrong with an environment, at a path such as
// services.web.config.port; the CLI maps the path to file:line:col.
type Problem struct {
	Path []string `json:"path"`
	Msg  string   `json:"message"`
}

func (p Problem) Error() string {
	if len(p.Path) == 0 {
		return p.Msg
	}
	return strings.Join(p.Path, ".") + ": " + p.Msg
}

// Problems is every problem found; it is an error when non-empty.
type Problems []Problem

func (ps Problems) Error() string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(p.Error())
	}
	return b.String()
}

func (ps *Problems) add(path []string, format string, args ...any) {
	*ps = append(*ps, Problem{Path: append([]string(nil), path...), Msg: fmt.Sprintf(format, args...)})
}

// Desired is a resolved environment: every reference checked, endpoints
// bound, config complete, peer relations added.
type Desired struct {
	Name      string
	Services  map[string]*DesiredService
	Relations map[RelationKey]*DesiredRelation
	// Secrets are the declared user secrets by name.
	Secrets map[string]*DesiredSecret
	// UpdateStatus is the environment's update-status-hook-interval; 0
	// for the server's.
	UpdateStatus time.Duration
	// Credential is the declared cloud credential, or nil.
	Credential *Credential
	// Placement is the environment's placement rule, or nil for every
	// machine.
	Placement *EnvPlacement
	// RemoveUnits are the units the deploy names to go dying
	// (Deploy.RemoveUnits), checked against the state by planDeploy.
	RemoveUnits []string
}

// DesiredService is a service with its charm bound and config complete.
type DesiredService struct {
	Name  string
	Charm string
	// CharmName is the charm's own name, for messages.
	CharmName   string
	Config      map[string]any
	Units       int
	Placement   []string
	Subordinate bool
	// Storage is the instance count per store the environment set.
	Storage map[string]int
	// Secret names the charm's options of type secret, whose values a
	// plan shows redacted.
	Secret map[string]bool
	// Resources are the resource digests by name.
	Resources map[string]string
	// Trust lets the units read the credential.
	Trust bool
	// Expose is Juju's exposure, recorded.
	Expose bool
}

// DesiredRelation is a relation with its endpoints bound.
type DesiredRelation struct {
	Key       RelationKey
	Name      string
	Endpoints []RelEndpoint
	Interface string
	Scope     Scope
}

// Resolve checks env against the charms it names (by hash) and binds every
// reference. It returns all problems found, not just the first.
func Resolve(env *Environment, charms map[string]*Charm) (*Desired, error) {
	var ps Problems
	if env.APIVersion != APIVersion {
		ps.add([]string{"apiVersion"}, "is %q; this fixpoint understands %q", env.APIVersion, APIVersion)
	}
	d := &Desired{Name: env.Name, Services: map[string]*DesiredService{}, Relations: map[RelationKey]*DesiredRelation{}}
	metas := map[string]*CharmMeta{}
	d.Secrets = resolveUserSecrets(env, &ps)
	resolveModelConfig(env, d, &ps)
	for _, name := range sortedKeys(env.Services) {
		spec := env.Services[name]
		path := []string{"services", name}
		if err := CheckName(KindService, name); err != nil {
			ps.add(path, "%v", err)
			continue
		}
		ch, ok := charms[spec.CharmHash]
		if !ok {
			ps.add(append(path, "charm"), "charm %q was not packed (no content hash %q known)", spec.Charm, spec.CharmHash)
			continue
		}
		meta := &ch.Meta
		metas[name] = meta
		ds := &DesiredService{Name: name, Charm: ch.Hash, CharmName: meta.Name, Units: 1, Placement: spec.Placement, Subordinate: meta.Subordinate, Trust: spec.Trust, Expose: spec.Expose}
		if spec.Units != nil {
			ds.Units = *spec.Units
		}
		if ds.Units < 0 {
			ps.add(append(path, "units"), "units is %d; it must be 0 or more", ds.Units)
		}
		if meta.Subordinate {
			if spec.Units != nil && *spec.Units != 0 {
				ps.add(append(path, "units"), "service %s runs subordinate charm %s, which gets one unit per related principal unit; remove units", name, meta.Name)
			}
			ds.Units = 0
		}
		if len(spec.Channel) > maxChannel || strings.ContainsFunc(spec.Channel, isControl) || strings.ContainsAny(spec.Channel, " \t") {
			ps.add(append(path, "channel"), "channel %s: at most %d printable bytes without spaces, e.g. \"latest/stable\"", Quote(spec.Channel, 32), maxChannel)
		}
		if spec.Revision != nil && *spec.Revision < 0 {
			ps.add(append(path, "revision"), "revision is %d; it must be 0 or more", *spec.Revision)
		}
		for i, m := range spec.Placement {
			if err := CheckName(KindMachine, m); err != nil {
				ps.add(append(path, "placement", fmt.Sprint(i)), "%v", err)
			}
		}
		ds.Storage = resolveStorage(path, spec.Storage, meta, &ps)
		ds.Config = map[string]any{}
		for k, o := range meta.Options {
			if SecretOption(o) {
				if ds.Secret == nil {
					ds.Secret = map[string]bool{}
				}
				ds.Secret[k] = true
			}
			if o.Default != nil {
				v, err := ConvertOption(o.Type, o.Default)
				if err == nil {
					ds.Config[k] = v
				}
			}
		}
		for _, k := range sortedKeys(spec.Config) {
			o, ok := meta.Options[k]
			if !ok {
				ps.add(append(path, "config", k), "charm %s has no option %q (it has: %s)", meta.Name, k, listOr(sortedKeys(meta.Options)))
				continue
			}
			v, err := ConvertOption(o.Type, spec.Config[k])
			if err != nil {
				ps.add(append(path, "config", k), "option %q of charm %s is of type %s: %v", k, meta.Name, o.Type, err)
				continue
			}
			if SecretOption(o) {
				if str, ok := v.(string); ok && strings.HasPrefix(str, redactedPrefix) {
					ps.add(append(path, "config", k), "option %q of charm %s holds a redacted value, not the value: set the value, or deploy the document as read (GET /v1/env) where the service still has it", k, meta.Name)
					continue
				}
				if v, err = resolveSecretRef(env, v); err != nil {
					ps.add(append(path, "config", k), "option %q of charm %s %v", k, meta.Name, err)
					continue
				}
			}
			ds.Config[k] = v
		}
		ds.Resources = resolveResources(path, spec, meta, &ps)
		d.Services[name] = ds
		for _, p := range sortedKeys(meta.Peers) {
			ep, _ := meta.Endpoint(p)
			rel := &DesiredRelation{
				Key:       RelationKey(name + ":" + p),
				Endpoints: []RelEndpoint{{Service: name, Name: p, Role: Peer, Interface: ep.Interface, Scope: ep.Scope, Limit: ep.Limit}},
				Interface: ep.Interface,
				Scope:     ep.Scope,
			}
			d.Relations[rel.Key] = rel
		}
	}
	for _, rname := range sortedKeys(env.Relations) {
		ends := env.Relations[rname]
		path := []string{"relations", rname}
		if err := CheckName(KindRelation, rname); err != nil {
			ps.add(path, "%v", err)
			continue
		}
		if len(ends) != 2 {
			ps.add(path, "a relation joins exactly two endpoints, written [\"svc:endpoint\", \"svc:endpoint\"]; got %d (peer relations are created for you)", len(ends))
			continue
		}
		rel, err := bindRelation(ends[0], ends[1], metas, env.Services)
		if err != nil {
			ps.add(path, "%v", err)
			continue
		}
		rel.Name = rname
		if prev, dup := d.Relations[rel.Key]; dup {
			ps.add(path, "relation %s already exists as %q", rel.Key, prev.Name)
			continue
		}
		d.Relations[rel.Key] = rel
	}
	resolveCredential(env, d, &ps)
	resolveEnvPlacement(env, d, &ps)
	checkLimits(d, metas, &ps)
	checkSubordinates(d, metas, &ps)
	if len(ps) > 0 {
		return nil, ps
	}
	return d, nil
}

// bindRelation resolves two endpoint references ("svc" or "svc:ep").
func bindRelation(a, b string, metas map[string]*CharmMeta, specs map[string]ServiceSpec) (*DesiredRelation, error) {
	sa, ea := splitEndpoint(a)
	sb, eb := splitEndpoint(b)
	for _, s := range []string{sa, sb} {
		if _, ok := specs[s]; !ok {
			return nil, fmt.Errorf("unknown service %q (services: %s)", s, listOr(sortedKeys(specs)))
		}
		if _, ok := metas[s]; !ok {
			return nil, fmt.Errorf("service %q has no usable charm", s)
		}
	}
	if sa == sb {
		if ea == eb {
			return nil, fmt.Errorf("relates endpoint %s to itself; a relation needs two different endpoints", a)
		}
		return nil, fmt.Errorf("relates service %s to itself; units of one service talk over a peer endpoint, which is related for you", sa)
	}
	candA, err := candidates(sa, ea, metas[sa])
	if err != nil {
		return nil, err
	}
	candB, err := candidates(sb, eb, metas[sb])
	if err != nil {
		return nil, err
	}
	type pair struct{ x, y EndpointSpec }
	var fits, implicit []pair
	var why []string
	for _, x := range candA {
		for _, y := range candB {
			if err := compatible(sa, x, sb, y); err != nil {
				why = append(why, err.Error())
				continue
			}
			if x.Name == JujuInfo || y.Name == JujuInfo {
				implicit = append(implicit, pair{x, y})
			} else {
				fits = append(fits, pair{x, y})
			}
		}
	}
	if len(fits) == 0 {
		fits = implicit
	}
	switch {
	case len(fits) == 0 && len(why) == 1:
		return nil, fmt.Errorf("%s", why[0])
	case len(fits) == 0:
		return nil, fmt.Errorf("no endpoint of %s fits one of %s: a relation joins an endpoint that provides an interface with one that requires the same interface; %s has %s, and %s has %s",
			sa, sb, sa, describeEndpoints(candA), sb, describeEndpoints(candB))
	case len(fits) > 1:
		var opts []string
		for _, f := range fits {
			opts = append(opts, fmt.Sprintf("[%s:%s, %s:%s]", sa, f.x.Name, sb, f.y.Name))
		}
		return nil, fmt.Errorf("ambiguous: %s and %s fit in %d ways; name the endpoints: %s", a, b, len(fits), strings.Join(opts, " or "))
	}
	x, y := fits[0].x, fits[0].y
	eps := []RelEndpoint{
		{Service: sa, Name: x.Name, Role: x.Role, Interface: x.Interface, Scope: x.Scope, Limit: x.Limit},
		{Service: sb, Name: y.Name, Role: y.Role, Interface: y.Interface, Scope: y.Scope, Limit: y.Limit},
	}
	sort.Slice(eps, func(i, j int) bool { return eps[i].String() < eps[j].String() })
	scope := Global
	if x.Scope == Container || y.Scope == Container {
		scope = Container
	}
	return &DesiredRelation{
		Key:       RelationKey(eps[0].String() + " " + eps[1].String()),
		Endpoints: eps,
		Interface: x.Interface,
		Scope:     scope,
	}, nil
}

func candidates(svc, ep string, meta *CharmMeta) ([]EndpointSpec, error) {
	if ep != "" {
		e, ok := meta.Endpoint(ep)
		if !ok {
			return nil, fmt.Errorf("service %s (charm %s) has no endpoint %q; it has: %s", svc, meta.Name, ep, strings.Join(meta.EndpointNames(), ", "))
		}
		if e.Role == Peer {
			return nil, fmt.Errorf("endpoint %s:%s is a peer endpoint; peers are related for you and cannot be named in a relation", svc, ep)
		}
		return []EndpointSpec{e}, nil
	}
	var out []EndpointSpec
	for _, e := range meta.Endpoints() {
		if e.Role != Peer {
			out = append(out, e)
		}
	}
	return out, nil
}

// describeEndpoints lists endpoints with their role and interface, e.g.
// `db (requires "sql"), juju-info (provides "juju-info")`.
func describeEndpoints(eps []EndpointSpec) string {
	if len(eps) == 0 {
		return "no endpoint that can be related"
	}
	parts := make([]string, len(eps))
	for i, e := range eps {
		parts[i] = fmt.Sprintf("%s (%s %q)", e.Name, e.Role, e.Interface)
	}
	return strings.Join(parts, ", ")
}

func compatible(sa string, x EndpointSpec, sb string, y EndpointSpec) error {
	if x.Interface != y.Interface {
		return fmt.Errorf("interfaces differ: %s:%s speaks %q, %s:%s speaks %q", sa, x.Name, x.Interface, sb, y.Name, y.Interface)
	}
	if !(x.Role == Provides && y.Role == Requires || x.Role == Requires && y.Role == Provides) {
		return fmt.Errorf("roles do not fit: %s:%s and %s:%s both %s %q; one side must provide and the other require", sa, x.Name, sb, y.Name, x.Role, x.Interface)
	}
	return nil
}

func splitEndpoint(s string) (string, string) {
	if i := strings.IndexByte(s, ':'); i >= 0 {
		return s[:i], s[i+1:]
	}
	return s, ""
}

func checkLimits(d *Desired, metas map[string]*CharmMeta, ps *Problems) {
	type use struct {
		ep    RelEndpoint
		names []string
	}
	uses := map[string]*use{}
	for _, r := range d.Relations {
		for _, e := range r.Endpoints {
			if e.Limit <= 0 {
				continue
			}
			u := uses[e.String()]
			if u == nil {
				u = &use{ep: e}
				uses[e.String()] = u
			}
			u.names = append(u.names, relLabel(r.Name))
		}
	}
	for _, key := range sortedKeys(uses) {
		u := uses[key]
		if len(u.names) <= u.ep.Limit {
			continue
		}
		sort.Strings(u.names)
		charm := u.ep.Service
		if m := metas[u.ep.Service]; m != nil {
			charm = m.Name
		}
		ps.add([]string{"relations", u.names[len(u.names)-1]}, "endpoint %s allows %d relation%s but is in %d: %s; remove one of them, or raise the limit of endpoint %q in charm %s",
			key, u.ep.Limit, plural(u.ep.Limit), len(u.names), strings.Join(u.names, ", "), u.ep.Name, charm)
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func checkSubordinates(d *Desired, metas map[string]*CharmMeta, ps *Problems) {
	for _, name := range sortedKeys(d.Services) {
		s := d.Services[name]
		if !s.Subordinate {
			continue
		}
		ok := false
		for _, r := range d.Relations {
			if r.Scope != Container || len(r.Endpoints) != 2 {
				continue
			}
			for i, e := range r.Endpoints {
				other := d.Services[r.Endpoints[1-i].Service]
				if e.Service == name && other != nil && !other.Subordinate {
					ok = true
				}
			}
		}
		if !ok {
			ps.add([]string{"services", name}, "%s", subordinateHint(d, metas, name))
		}
	}
}

// subordinateHint explains how to attach subordinate service sub to a
// principal, naming real endpoints: its own container-scoped ones, and
// for each, a principal service with an endpoint that fits it.
func subordinateHint(d *Desired, metas map[string]*CharmMeta, sub string) string {
	msg := fmt.Sprintf("service %s is subordinate: its units run beside principal units, one each, over a container-scoped relation, and it has none", sub)
	meta := metas[sub]
	if meta == nil {
		return msg
	}
	var own []EndpointSpec
	for _, e := range meta.Endpoints() {
		if e.Role != Peer && e.Scope == Container {
			own = append(own, e)
		}
	}
	if len(own) == 0 {
		return msg + fmt.Sprintf("; charm %s declares no container-scoped endpoint: add one, e.g. requires: host: {interface: \"juju-info\", scope: \"container\"}", meta.Name)
	}
	var examples []string
	for _, e := range own {
		for _, p := range sortedKeys(d.Services) {
			if d.Services[p].Subordinate || metas[p] == nil {
				continue
			}
			for _, pe := range metas[p].Endpoints() {
				if compatible(p, pe, sub, e) == nil {
					examples = append(examples, fmt.Sprintf("%q: [\"%s:%s\", \"%s:%s\"]", p+"-"+sub, p, pe.Name, sub, e.Name))
					break
				}
			}
			if len(examples) >= 3 {
				break
			}
		}
	}
	if len(examples) == 0 {
		var ends []string
		for _, e := range own {
			ends = append(ends, fmt.Sprintf("%s:%s (%s %q)", sub, e.Name, e.Role, e.Interface))
		}
		return msg + fmt.Sprintf("; relate %s to a principal service with an endpoint that fits it", strings.Join(ends, " or "))
	}
	return msg + "; relate it to a principal, e.g. relations: " + strings.Join(examples, " or ")
}

func listOr(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

func sortedKeys[K ~string | ~int, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}
