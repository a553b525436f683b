package model

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"unicode"
)

// Which values are secret, and how they are shown to people: the one rule
// the API applies to every answer an operator reads (docs/security.md,
// "Secrets on screen"). Hooks always get the values themselves.

// SecretType is the config option type whose values are secret: a string
// that reaches hooks as it is and is shown redacted.
const SecretType = "secret"

// secretSubstrings mark a settings key as secret wherever they occur in
// it, lower-cased.
var secretSubstrings = []string{"password", "passwd", "secret", "token", "credential"}

// SecretKey reports whether a settings key (of a unit's relation
// settings, an application bag, leader data or a unit's state) names a
// secret. Lower-cased, the key contains password, passwd, secret, token or
// credential; or one of its words is "key" or "keys" or ends in them
// (api_key, private-key, apiKey, sshkeys). Words are split at every byte
// that is not a letter or digit and where a lower-case letter meets an
// upper-case one. The rule errs towards redacting: "monkey" counts.
func SecretKey(key string) bool {
	lower := strings.ToLower(key)
	for _, s := range secretSubstrings {
		if strings.Contains(lower, s) {
			return true
		}
	}
	if !strings.Contains(lower, "key") {
		return false
	}
	for _, w := range words(key) {
		w = strings.ToLower(w)
		if strings.HasSuffix(w, "key") || strings.HasSuffix(w, "keys") {
			return true
		}
	}
	return false
}

// words splits a key at non-alphanumerics and at lower-to-upper case
// changes.
func words(key string) []string {
	var out []string
	start := -1
	var prev rune
	for i, r := range key {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case !alnum:
			if start >= 0 {
				out = append(out, key[start:i])
			}
			start = -1
		case start < 0:
			start = i
		case unicode.IsLower(prev) && unicode.IsUpper(r):
			out = append(out, key[start:i])
			start = i
		}
		prev = r
	}
	if start >= 0 {
		out = append(out, key[start:])
	}
	return out
}

// SecretOption reports whether the values of a config option are secret.
func SecretOption(o Option) bool { return o.Type == SecretType }

// Redact is how a secret value is shown: the first 8 hex digits of its
// sha256, enough to tell two values apart and not to show either.
func Redact(value string) string {
	sum := sha256.Sum256([]byte(value))
	return "<redacted sha256:" + hex.EncodeToString(sum[:4]) + "…>"
}

// RedactAny is Redact of a config value in its printed form.
func RedactAny(v any) string {
	if s, ok := v.(string); ok {
		return Redact(s)
	}
	return Redact(fmt.Sprint(v))
}

// RedactBag returns bag with the values of its secret keys redacted: bag
// itself when it has none, otherwise a copy.
func RedactBag(bag map[string]string) map[string]string {
	out, _ := redactBag(bag)
	return out
}

// redactBag is RedactBag, saying whether it redacted anything.
func redactBag(bag map[string]string) (map[string]string, bool) {
	var out map[string]string
	for k, v := range bag {
		if !SecretKey(k) {
			continue
		}
		if out == nil {
			out = maps.Clone(bag)
		}
		out[k] = Redact(v)
	}
	if out == nil {
		return bag, false
	}
	return out, true
}

// RedactConfig returns config with the values of its options of type
// secret (in options, its charm's) redacted: config itself when none is
// set, otherwise a copy.
func RedactConfig(config map[string]any, options map[string]Option) map[string]any {
	out, _ := redactConfig(config, options)
	return out
}

func redactConfig(config map[string]any, options map[string]Option) (map[string]any, bool) {
	var out map[string]any
	for k, v := range config {
		if o, ok := options[k]; !ok || !SecretOption(o) || v == nil {
			continue
		}
		if out == nil {
			out = maps.Clone(config)
		}
		out[k] = RedactAny(v)
	}
	if out == nil {
		return config, false
	}
	return out, true
}

// MinScrubLen is the shortest secret value Scrub replaces in free text: a
// shorter one would mangle text it happens to occur in by chance.
const MinScrubLen = 4

// Scrub replaces, in free text (a hook's stderr or error), every
// occurrence of each of secrets at least MinScrubLen bytes long with its
// Redact form. Longer values go first, so that one secret holding another
// is replaced whole.
func Scrub(text string, secrets []string) string {
	if text == "" || len(secrets) == 0 {
		return text
	}
	var use []string
	for _, s := range secrets {
		if len(s) >= MinScrubLen && strings.Contains(text, s) {
			use = append(use, s)
		}
	}
	if len(use) == 0 {
		return text
	}
	slices.SortStableFunc(use, func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(use))
	for _, s := range use {
		pairs = append(pairs, s, Redact(s))
	}
	return strings.NewReplacer(pairs...).Replace(text)
}

// SecretsOf lists the secret values unit sees in s: its service's config
// options of type secret, and the secret keys of its leader data, its own
// state, of every bag of its relations (its own settings, both
// services' application bags, the settings of the remote members it
// sees), and the values of the Juju secrets it may read. Scrub takes them out of what its hooks printed.
func (s *State) SecretsOf(unit string) []string {
	u := s.Units[unit]
	if u == nil {
		return nil
	}
	var out []string
	bag := func(pairs iter.Seq2[string, string]) {
		for k, v := range pairs {
			if SecretKey(k) {
				out = append(out, v)
			}
		}
	}
	if svc := s.Services[u.Service]; svc != nil {
		if ch := s.Charms[svc.Charm]; ch != nil {
			for k, v := range svc.Config {
				if o, ok := ch.Meta.Options[k]; ok && SecretOption(o) && v != nil {
					out = append(out, fmt.Sprint(v))
				}
			}
		}
		bag(svc.LeaderData.All())
	}
	bag(maps.All(u.State))
	for _, r := range s.RelationsOf(u.Service) {
		bag(u.Settings.Get(r.ID).All())
		for _, b := range r.App {
			bag(b.All())
		}
		for _, m := range s.RemoteMembers(u, r) {
			bag(m.Settings.Get(r.ID).All())
		}
	}
	return append(out, s.secretValues(u)...)
}

// Redacted returns a copy of s for people to read: every secret value
// (SecretKey, SecretOption) redacted, everything else as in s. Objects
// holding no secret are shared with s; read it, do not change it.
func (s *State) Redacted() *State {
	c := s.Clone()
	for name, svc := range c.Services {
		var opts map[string]Option
		if ch := s.Charms[svc.Charm]; ch != nil {
			opts = ch.Meta.Options
		}
		cfg, a := redactConfig(svc.Config, opts)
		ld, b := redactBagOf(svc.LeaderData)
		if a || b {
			v := *svc
			v.Config, v.LeaderData = cfg, ld
			c.Services[name] = &v
		}
	}
	for name, u := range c.Units {
		st, a := redactBag(u.State)
		settings, b := redactRelBags(u.Settings)
		if a || b {
			v := *u
			v.State, v.Settings = st, settings
			c.Units[name] = &v
		}
	}
	if c.Document != nil {
		c.Document = RedactDocument(c.Document, s.Charms)
	}
	for id, r := range c.Relations {
		app, a := redactBags(r.App)
		departed, b := redactBags(r.Departed)
		if a || b {
			v := *r
			v.App, v.Departed = app, departed
			c.Relations[id] = &v
		}
	}
	return c
}

// redactRelBags is redactBags of a unit's settings.
func redactRelBags(r RelBags) (RelBags, bool) {
	out, changed := r, false
	for id, b := range r.All() {
		if red, ok := redactBagOf(b); ok {
			out, changed = out.With(id, red), true
		}
	}
	return out, changed
}

// redactBagOf is redactBag of a Bag.
func redactBagOf(b *Bag) (*Bag, bool) {
	if b == nil {
		return nil, false
	}
	secret := false
	for k := range b.All() {
		secret = secret || SecretKey(k)
	}
	if !secret {
		return b, false
	}
	d, _ := redactBag(b.Map())
	return NewBag(d, b.Rev), true
}

// redactBags is redactBagOf over a map of bags.
func redactBags[K comparable](m map[K]*Bag) (map[K]*Bag, bool) {
	var out map[K]*Bag
	for k, b := range m {
		r, changed := redactBagOf(b)
		if !changed {
			continue
		}
		if out == nil {
			out = maps.Clone(m)
		}
		out[k] = r
	}
	if out == nil {
		return m, false
	}
	return out, true
}
