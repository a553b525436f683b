package engine

import (
	"maps"
	"strconv"
	"strings"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// What people read, with secrets redacted by model's rule (model.SecretKey,
// model.SecretOption, model.Redact). The API applies these to its answers
// unless the operator asks to see the values; agents' work is never
// redacted: hooks get the values.

// markSecretConfig marks the config changes of service svc's secret
// options secret.
func markSecretConfig(st *model.State, svc string, changes []Change) {
	opts := optionsOf(st, svc)
	for i := range changes {
		if k, ok := strings.CutPrefix(changes[i].Key, "config."); ok {
			if o, ok := opts[k]; ok && model.SecretOption(o) {
				changes[i].Secret = true
			}
		}
	}
}

// optionsOf is the config options of service svc's charm.
func optionsOf(st *model.State, svc string) map[string]model.Option {
	if s := st.Services[svc]; s != nil {
		if ch := st.Charms[s.Charm]; ch != nil {
			return ch.Meta.Options
		}
	}
	return nil
}

// Redacted is c with a secret's old and new values redacted; markers
// such as (unset) and (absent) stay.
func (c Change) Redacted() Change {
	if !c.Secret {
		return c
	}
	c.Old, c.New = redactShown(c.Old), redactShown(c.New)
	return c
}

// redactShown redacts a value as show quoted it, and leaves a marker.
func redactShown(s string) string {
	v, err := strconv.Unquote(s)
	if err != nil {
		return s
	}
	return model.Redact(v)
}

// RedactChanges returns changes with every secret change redacted: a copy
// when one is, changes itself otherwise.
func RedactChanges(changes []Change) []Change {
	var out []Change
	for i, c := range changes {
		if !c.Secret {
			continue
		}
		if out == nil {
			out = append([]Change(nil), changes...)
		}
		out[i] = c.Redacted()
	}
	if out == nil {
		return changes
	}
	return out
}

// RedactUniverse is uni for people: the values of options (options, its
// charm's) of type secret, of every secret key in its bags and of every
// Juju secret's content redacted.
// uni is not changed.
func RedactUniverse(uni *charmapi.Universe, options map[string]model.Option) *charmapi.Universe {
	out := *uni
	out.Config = model.RedactConfig(uni.Config, options)
	out.LeaderData = model.RedactBag(uni.LeaderData)
	out.State = model.RedactBag(uni.State)
	out.Relations = make([]charmapi.Relation, len(uni.Relations))
	for i, r := range uni.Relations {
		r.Local = model.RedactBag(r.Local)
		r.App = model.RedactBag(r.App)
		r.RemoteApp = model.RedactBag(r.RemoteApp)
		r.Units = redactUnits(r.Units)
		r.Departed = redactUnits(r.Departed)
		out.Relations[i] = r
	}
	out.Secrets = redactSecrets(uni.Secrets)
	return &out
}

// redactUnits redacts each member's settings.
func redactUnits(m map[string]map[string]string) map[string]map[string]string {
	if m == nil {
		return nil
	}
	out := maps.Clone(m)
	for k, bag := range out {
		out[k] = model.RedactBag(bag)
	}
	return out
}

// redactSecrets is ss with every content value redacted: all of a Juju
// secret is secret, whatever its keys are called.
func redactSecrets(ss []charmapi.Secret) []charmapi.Secret {
	if ss == nil {
		return nil
	}
	out := make([]charmapi.Secret, len(ss))
	for i, s := range ss {
		s.Content, s.LatestContent = redactAll(s.Content), redactAll(s.LatestContent)
		out[i] = s
	}
	return out
}

func redactAll(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = model.Redact(v)
	}
	return out
}

// OptionsOf is the config options of the charm a universe names, from st:
// what RedactUniverse needs.
func OptionsOf(st *model.State, charm string) map[string]model.Option {
	if ch := st.Charms[charm]; ch != nil {
		return ch.Meta.Options
	}
	return nil
}
