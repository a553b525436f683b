package legacy

import (
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/fixpoint/fixpoint/charmapi"
)

var (
	relationFlag = flagDef{name: "relation", aliases: []string{"r"}}
	appFlag      = flagDef{name: "app", isBool: true}
	// errPermission is Juju's apiserver ErrPerm, as its hook tools print it.
	errPermission = errors.New("permission denied")
)

// relationGet is `relation-get [-r ID] [--app] [KEY|-] [UNIT|APP]`: one
// key or every key of a unit's (or with --app a service's) settings. The
// settings are those of the universe when the reconcile began, plus this
// unit's own writes ("consistent but not necessarily accurate").
func relationGet(s *session, c *call) (any, error) {
	ident, err := s.in.relationArg(c)
	if err != nil {
		return nil, err
	}
	args := c.f.args
	key := ""
	if len(args) > 0 {
		if key = args[0]; key == "-" {
			key = ""
		}
		args = args[1:]
	}
	app := c.f.bool("app")
	ev := c.event()
	var target string
	switch {
	case len(args) > 0:
		// A unit named with --app stands for its application, as in
		// Juju.
		if target, args = args[0], args[1:]; app && charmapi.UnitNumber(target) >= 0 {
			target = charmapi.ServiceOf(target)
		}
	case app:
		target = s.in.remoteService(ident)
	case ev.RemoteUnit != "":
		target = ev.RemoteUnit
	case ev.RemoteApp != "":
		// A hook with a remote application but no remote unit (an
		// application bag's -relation-changed, -relation-created,
		// -relation-broken) reads that application's bag, as Juju's
		// relation-get does.
		target, app = ev.RemoteApp, true
	}
	if target == "" {
		return nil, usagef("no unit or application specified")
	}
	if err := checkEmpty(args); err != nil {
		return nil, err
	}
	var bag map[string]string
	if app {
		bag, err = s.readApp(ident, target)
	} else {
		bag, err = s.readUnit(c, ident, target)
	}
	if (app && target == s.in.u.Service) || (!app && target == s.in.u.Unit) {
		// The hook may write these with relation-set.
		c.keep = keepWrite
	}
	if err != nil {
		return nil, err
	}
	if key != "" {
		if v, ok := bag[key]; ok {
			return v, nil
		}
		return nil, nil
	}
	if bag == nil {
		bag = map[string]string{}
	}
	return maps.Clone(bag), nil
}

// readUnit returns a unit's settings in ident.
func (s *session) readUnit(c *call, ident, unit string) (map[string]string, error) {
	if unit == s.in.u.Unit {
		return s.writes.localBag(&s.in, ident), nil
	}
	if r, ok := s.in.rels[ident]; ok {
		if bag, ok := r.Units[unit]; ok {
			return bag, nil
		}
		// Juju keeps a departed unit's settings readable; the universe
		// carries them in departed until the unit has run its hook.
		if bag, ok := r.Departed[unit]; ok {
			return bag, nil
		}
	}
	// A unit whose settings are gone altogether (its relation is gone
	// too) reads as empty in its departed hook.
	ev := c.event()
	if _, gone := s.in.ghosts[ident]; gone || (ev.Relation == ident && (ev.Departing == unit || ev.RemoteUnit == unit)) {
		return map[string]string{}, nil
	}
	return nil, fmt.Errorf("cannot read settings for unit %q in relation %q: unit is not a member", unit, ident)
}

// readApp returns a service's bag in ident: the unit's own service's
// (with the leader's writes) or the remote one's.
func (s *session) readApp(ident, app string) (map[string]string, error) {
	r, ok := s.in.rels[ident]
	if !ok {
		if s.in.ghosts[ident].remoteApp == app || app == s.in.u.Service {
			return map[string]string{}, nil
		}
		return nil, fmt.Errorf("cannot read settings for application %q in relation %q: not in the relation", app, ident)
	}
	switch {
	case app == s.in.u.Service && !s.in.u.Leader && !s.in.isPeer(ident):
		// Juju's controller lets only the leader read its own
		// application's bag over a provider-requirer relation
		// (uniter facade, readLocalApplicationSettings: ErrPerm).
		return nil, errPermission
	case app == s.in.u.Service:
		// Over a peer relation the remote service is the unit's own; a
		// universe may carry that bag as app or as remote_app.
		if _, written := s.writes.app[ident]; !written && len(r.App) == 0 && s.in.isPeer(ident) {
			return r.RemoteApp, nil
		}
		return s.writes.appBag(&s.in, ident), nil
	case app == r.RemoteService:
		return r.RemoteApp, nil
	}
	return nil, fmt.Errorf("cannot read settings for application %q in relation %q: not in the relation", app, ident)
}

// relationSet is `relation-set [-r ID] [--app] [--file F|-] K=V...`. An
// empty value deletes the key; key=value arguments override the file, as
// in Juju. --app writes the unit's service's bag and is leader only.
func relationSet(s *session, c *call) (any, error) {
	ident, err := s.in.relationArg(c)
	if err != nil {
		return nil, err
	}
	settings, err := settingsArgs(c)
	if err != nil {
		return nil, err
	}
	app := c.f.bool("app")
	if app && !s.in.u.Leader {
		return nil, fmt.Errorf("cannot write application settings: not the leader")
	}
	if _, gone := s.in.ghosts[ident]; gone {
		// The relation is being torn down: there is no bag left to write.
		s.log.Debug("dropped settings written to a relation that is gone", "hook", c.event().Hook, "relation", ident)
		return noOutput{}, nil
	}
	if app {
		s.writes.app[ident] = write(s.writes.appBag(&s.in, ident), settings)
	} else {
		s.writes.local[ident] = write(s.writes.localBag(&s.in, ident), settings)
	}
	return noOutput{}, nil
}

// relationIDs is `relation-ids [NAME]`: the relations over an endpoint,
// by id; NAME defaults to the hook's own relation's endpoint.
func relationIDs(s *session, c *call) (any, error) {
	args := c.f.args
	name := ""
	if ev := c.event(); ev.Relation != "" {
		name, _, _ = strings.Cut(ev.Relation, ":")
	}
	if len(args) > 0 {
		name, args = args[0], args[1:]
	}
	if name == "" {
		return nil, usagef("no endpoint name specified")
	}
	if err := checkEmpty(args); err != nil {
		return nil, err
	}
	ids := []string{}
	for _, r := range s.in.u.Relations {
		if r.Name == name {
			ids = append(ids, r.Ident)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return s.in.rels[ids[i]].ID < s.in.rels[ids[j]].ID })
	return ids, nil
}

// relationList is `relation-list [-r ID] [--app]`: the remote members in
// the unit's view of the relation (see remoteUnits), or with --app the
// remote service's name.
func relationList(s *session, c *call) (any, error) {
	ident, err := s.in.relationArg(c)
	if err != nil {
		return nil, err
	}
	if err := checkEmpty(c.f.args); err != nil {
		return nil, err
	}
	if c.f.bool("app") {
		return s.in.remoteService(ident), nil
	}
	return s.remoteUnits(ident, c.event()), nil
}

// settingsArgs are relation-set's and state-set's settings: the --file's
// YAML map (its content the hook tool sent), then the KEY=VALUE
// arguments over it.
func settingsArgs(c *call) (map[string]string, error) {
	settings := map[string]string{}
	if c.f.has("file") {
		if c.file == nil {
			return nil, fmt.Errorf("--file %s: the hook tool sent no content", c.f.str("file"))
		}
		var err error
		if settings, err = parseSettingsFile(*c.file); err != nil {
			return nil, fmt.Errorf("--file %s: %w", c.f.str("file"), err)
		}
	}
	overrides, err := parseKeyValues(c.f.args)
	if err != nil {
		return nil, err
	}
	maps.Copy(settings, overrides)
	return settings, nil
}

// parseKeyValues parses key=value arguments as Juju's keyvalues.Parse
// with empty values allowed: both sides trimmed, a key at most once.
func parseKeyValues(args []string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range args {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, usagef("expected \"key=value\", got %q", kv)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if k == "" {
			return nil, usagef("expected \"key=value\", got %q", kv)
		}
		if _, dup := out[k]; dup {
			return nil, usagef("key %q specified more than once", k)
		}
		out[k] = v
	}
	return out, nil
}

// parseSettingsFile reads relation-set --file content: a YAML map, as
// current Juju reads it, or key=value lines (blank lines and # comments
// skipped), as Juju 1.x did.
func parseSettingsFile(data string) (map[string]string, error) {
	if strings.TrimSpace(data) == "" {
		return map[string]string{}, nil
	}
	var node yaml.Node
	if err := yaml.Unmarshal([]byte(data), &node); err == nil && len(node.Content) == 1 && node.Content[0].Kind == yaml.MappingNode {
		kvs := map[string]string{}
		if err := node.Decode(&kvs); err != nil {
			return nil, fmt.Errorf("expected a YAML map of strings: %w", err)
		}
		return kvs, nil
	}
	var lines []string
	for _, line := range strings.Split(data, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		lines = append(lines, line)
	}
	kvs, err := parseKeyValues(lines)
	if err != nil {
		return nil, fmt.Errorf("expected a YAML map or key=value lines: %w", err)
	}
	return kvs, nil
}
