package bundle

import (
	"encoding/base64"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/fixpoint/fixpoint/model"
)

// appKeys are the keys of an application, as Juju's parser knows them.
var appKeys = []string{
	"charm", "channel", "revision", "base", "series", "resources", "num_units", "scale", "to",
	"placement", "expose", "exposed-endpoints", "options", "annotations", "constraints", "storage",
	"devices", "bindings", "offers", "plan", "trust",
}

// keptWhy says, for each key kept only as a comment, why fixpoint has no
// counterpart: the warning's second half.
var keptWhy = map[string]string{
	"channel":     "fixpoint does not download charms; the charm repository (or the path) must hold the one meant",
	"revision":    "fixpoint does not download charms; the charm repository (or the path) must hold the one meant",
	"base":        "charms run on the machines registered with fixpoint, whatever their base",
	"series":      "charms run on the machines registered with fixpoint, whatever their base",
	"to":          "fixpoint places units with placement:, naming machines registered with it, not a bundle's machine numbers",
	"placement":   "fixpoint places units with placement:, naming machines registered with it",
	"expose":      "fixpoint opens no firewall: what a charm's ports reach is the machines' network's business",
	"annotations": "annotations are for Juju's GUI",
	"constraints": "fixpoint does not provision machines; it runs units on those registered with it",
	"devices":     "fixpoint does not attach devices",
	"bindings":    "fixpoint has no network spaces",
	"plan":        "plans are deprecated in Juju and unknown to fixpoint",
	"trust":       "fixpoint has no cloud credential to grant",
	// Overlay-only:
	"exposed-endpoints": "fixpoint opens no firewall: what a charm's ports reach is the machines' network's business",
	"offers":            "cross-model relations are not supported by fixpoint",
}

// app is one converted application: its service's fields in order.
type app struct {
	name    string
	charm   string
	units   int
	comment []string // kept keys, "key: value"
	config  [][2]string
	res     [][2]string
	storage [][2]string // name, count
	// subordinate is known when the charm could be looked at.
	subordinate bool
}

// placementRe is one to: entry: (<containertype>:)?(<unit>|<machine>|new).
var placementRe = regexp.MustCompile(`^(?:([a-z]+):)?([a-z0-9-]+(?:/[0-9]+)?|new)$`)

// application converts one application.
func (c *conv) application(key, n *yaml.Node) {
	name := key.Value
	where := fmt.Sprintf("application %q", name)
	if c.apps[name] != nil {
		c.errf(key, "%s is defined twice", where)
		return
	}
	if err := model.CheckName(model.KindService, name); err != nil {
		c.errf(key, "%s: %v; rename it (fixpoint's service names are DNS labels)", where, err)
	}
	a := &app{name: name}
	c.apps[name] = a
	c.order = append(c.order, name)
	if n.Kind != yaml.MappingNode {
		c.errf(n, "%s must be a mapping with charm:, num_units:, options: ...", where)
		return
	}
	f := c.fields(n, appKeys, where)
	if f["charm"] == nil || scalar(f["charm"]) == "" {
		c.errf(key, "%s has no charm; add charm: NAME or charm: ./path", where)
	} else {
		c.charm(a, f["charm"], where)
	}
	for _, k := range []string{"exposed-endpoints", "offers"} {
		if f[k] != nil && c.overlay[f[k]] == "" {
			c.errf(f[k], "%s: %s may only be given in an overlay, not in the base bundle", where, k)
		}
	}
	if f["series"] != nil && f["base"] != nil {
		c.errf(f["base"], "%s: series and base cannot both be given; keep base", where)
	}
	if f["placement"] != nil && !c.kubernetes {
		c.errf(f["placement"], "%s: placement is only for Kubernetes bundles (bundle: kubernetes); use to:", where)
	}
	if f["placement"] != nil && f["to"] != nil {
		c.errf(f["placement"], "%s: placement and to cannot both be given", where)
	}
	if r := f["revision"]; r != nil {
		if v, err := strconv.Atoi(scalar(r)); err != nil || v < 0 {
			c.errf(r, "%s: revision must be a whole number, 0 or more", where)
		} else if f["channel"] == nil {
			c.errf(r, "%s: a revision needs a channel; add channel:", where)
		}
	}
	c.units(a, f, where)
	// Kept keys, as comments, in the bundle's order.
	for _, kv := range pairs(n) {
		k := kv[0].Value
		if why, ok := keptWhy[k]; ok && f[k] != nil {
			a.comment = append(a.comment, k+": "+render(kv[1]))
			c.warnf(kv[0], "%s: %s kept as a comment: %s", where, k, why)
		}
	}
	if f["to"] != nil {
		c.placement(a, f["to"], where)
	}
	if f["options"] != nil {
		c.options(a, f["options"], where)
	}
	if f["resources"] != nil {
		c.resources(a, f["resources"], where)
	}
	if f["storage"] != nil {
		c.storage(a, f["storage"], where)
	}
}

// charm converts the charm reference: a path stays a path (rebased), a
// Charmhub or charm store URL becomes the bare name the charm repository
// is searched for.
func (c *conv) charm(a *app, n *yaml.Node, where string) {
	ref := scalar(n)
	if strings.HasPrefix(ref, ".") || strings.HasPrefix(ref, "/") {
		a.charm = ref
		if c.o.Rebase != nil {
			a.charm = c.o.Rebase(ref)
		}
	} else {
		name, rev := charmName(ref)
		if rev != "" {
			c.errf(n, "%s: charm %q has a revision in its URL; write charm: %s with revision: %s and a channel", where, ref, name, rev)
		}
		if err := model.CheckName(model.KindCharm, name); err != nil {
			c.errf(n, "%s: charm %q: %v", where, ref, err)
		}
		a.charm = name
		if name != ref {
			a.comment = append(a.comment, "charm: "+render(n))
		}
	}
	if c.o.Subordinate != nil {
		a.subordinate, _ = c.o.Subordinate(a.charm)
	}
}

// charmName is the name in a charm URL — ch:NAME, cs:~user/series/NAME-N,
// local:NAME-N, NAME: what the charm repository is searched for. The
// revision a cs: or local: URL ends with is dropped (those stores are
// gone); one in a ch: URL is returned, since Juju refuses it there.
func charmName(ref string) (name, rev string) {
	scheme, rest, ok := strings.Cut(ref, ":")
	if !ok {
		scheme, rest = "", ref
	}
	if i := strings.LastIndex(rest, "/"); i >= 0 {
		rest = rest[i+1:]
	}
	i := strings.LastIndex(rest, "-")
	if i <= 0 {
		return rest, ""
	}
	if _, err := strconv.Atoi(rest[i+1:]); err != nil {
		return rest, ""
	}
	switch scheme {
	case "cs", "local":
		return rest[:i], ""
	case "ch":
		return rest[:i], rest[i+1:]
	}
	return rest, ""
}

// units converts num_units (or scale), which Juju defaults to 0.
func (c *conv) units(a *app, f map[string]*yaml.Node, where string) {
	n := f["num_units"]
	if s := f["scale"]; s != nil {
		if n != nil {
			c.errf(s, "%s: scale and num_units cannot both be given", where)
			return
		}
		n = s
	}
	if n == nil {
		return
	}
	v, err := strconv.Atoi(scalar(n))
	if err != nil || v < 0 {
		c.errf(n, "%s: num_units must be a whole number, 0 or more", where)
		return
	}
	if v > 0 && a.subordinate {
		c.errf(n, "%s: num_units is %d but charm %s is subordinate: its units come one per related principal unit; remove num_units", where, v, a.charm)
	}
	a.units = v
}

// placement checks to: entries against the bundle's machines and
// applications, as Juju does, and marks the machines used.
func (c *conv) placement(a *app, n *yaml.Node, where string) {
	if n.Kind != yaml.SequenceNode {
		c.errf(n, "%s: to must be a list of placements, e.g. [\"0\", \"lxd:1\"]", where)
		return
	}
	if a.subordinate {
		c.errf(n, "%s: charm %s is subordinate: its units go where the principals it relates to are; remove to:", where, a.charm)
		return
	}
	if len(n.Content) > a.units && !c.kubernetes {
		c.errf(n, "%s: %d placements in to: for %d units; too many placements", where, len(n.Content), a.units)
	}
	for _, e := range n.Content {
		m := placementRe.FindStringSubmatch(scalar(e))
		if c.kubernetes {
			continue // a node selector, kept as a comment
		}
		if m == nil {
			c.errf(e, "%s: placement %q is not (<container>:)?(<machine>|<application>[/<unit>]|new)", where, scalar(e))
			continue
		}
		target, _, _ := strings.Cut(m[2], "/")
		switch {
		case target == "new":
		case target[0] >= '0' && target[0] <= '9':
			if c.machines[target] == nil {
				c.errf(e, "%s: placement %q names machine %q, which the machines section does not define", where, scalar(e), target)
			}
			c.machineUsed[target] = true
		default:
			c.placedOn = append(c.placedOn, placeRef{e, target, where})
		}
	}
}

// placeRef is a placement naming an application, checked once every
// application is known.
type placeRef struct {
	n      *yaml.Node
	target string
	where  string
}

// options converts charm options to config values.
func (c *conv) options(a *app, n *yaml.Node, where string) {
	if n.Kind != yaml.MappingNode {
		c.errf(n, "%s: options must map option names to values", where)
		return
	}
	seen := map[string]bool{}
	for _, kv := range pairs(n) {
		k, v := kv[0].Value, deref(kv[1])
		if seen[k] {
			c.errf(kv[0], "%s: option %s is given twice", where, k)
			continue
		}
		seen[k] = true
		if v.Kind != yaml.ScalarNode {
			c.errf(v, "%s: option %s: a config value is a string, number or boolean", where, k)
			continue
		}
		if v.Tag == "!!null" {
			c.warnf(v, "%s: option %s is null: left out, so it keeps the charm's default", where, k)
			continue
		}
		lit, err := c.value(v)
		if err != nil {
			c.errf(v, "%s: option %s: %v", where, k, err)
			continue
		}
		a.config = append(a.config, [2]string{k, lit})
	}
}

// yaml11Bools are the plain scalars Juju's YAML 1.1 parser reads as
// booleans that YAML 1.2 reads as strings.
var yaml11Bools = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "on": true, "On": true, "ON": true,
	"n": false, "N": false, "no": false, "No": false, "NO": false, "off": false, "Off": false, "OFF": false,
}

// value renders a scalar option value as a CUE literal, read as Juju
// reads it, with include-file:// and include-base64:// resolved.
func (c *conv) value(v *yaml.Node) (string, error) {
	if b, ok := yaml11Bools[v.Value]; ok && v.Style == 0 && v.Tag == "!!str" {
		return strconv.FormatBool(b), nil
	}
	switch v.Tag {
	case "!!bool":
		var b bool
		if err := v.Decode(&b); err != nil {
			return "", err
		}
		return strconv.FormatBool(b), nil
	case "!!int":
		var i int64
		if err := v.Decode(&i); err != nil {
			return "", fmt.Errorf("%q is not a whole number fixpoint can hold", v.Value)
		}
		return strconv.FormatInt(i, 10), nil
	case "!!float":
		var f float64
		if err := v.Decode(&f); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return "", fmt.Errorf("%q is not a finite number", v.Value)
		}
		s := strconv.FormatFloat(f, 'g', -1, 64)
		if !strings.ContainsAny(s, ".e") {
			s += ".0"
		}
		return s, nil
	}
	s := v.Value
	for prefix, encode := range map[string]bool{"include-file://": false, "include-base64://": true} {
		file, ok := strings.CutPrefix(s, prefix)
		if !ok {
			continue
		}
		if c.o.ReadFile == nil {
			return "", fmt.Errorf("%s%s: includes are not read here", prefix, file)
		}
		data, err := c.o.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("%s%s: %v", prefix, file, err)
		}
		if encode {
			return quote(base64.StdEncoding.EncodeToString(data)), nil
		}
		return quote(string(data)), nil
	}
	return quote(s), nil
}

// resources converts resources: a path is a file fixpoint uploads; a
// store revision has no counterpart.
func (c *conv) resources(a *app, n *yaml.Node, where string) {
	for _, kv := range pairs(n) {
		k, v := kv[0].Value, deref(kv[1])
		switch {
		case v.Kind == yaml.ScalarNode && v.Tag == "!!int":
			a.comment = append(a.comment, "resources: "+k+": "+v.Value)
			c.warnf(kv[0], "%s: resource %s is store revision %s, kept as a comment: fixpoint uploads files; give its file with resources: %s: \"./path\"", where, k, v.Value, k)
		case v.Kind == yaml.ScalarNode && v.Tag == "!!str" && v.Value != "":
			p := v.Value
			if c.o.Rebase != nil {
				p = c.o.Rebase(p)
			}
			a.res = append(a.res, [2]string{k, p})
		default:
			c.errf(v, "%s: resource %s must be a store revision (a number) or a file's path", where, k)
		}
	}
}

// storage converts storage directives: the count is fixpoint's; pool
// and size are kept as a comment.
func (c *conv) storage(a *app, n *yaml.Node, where string) {
	for _, kv := range pairs(n) {
		k, dir := kv[0].Value, scalar(kv[1])
		count, rest, err := storageCount(dir)
		if err != nil {
			c.errf(kv[1], "%s: storage %s: %v", where, k, err)
			continue
		}
		if count != "" {
			a.storage = append(a.storage, [2]string{k, count})
		}
		if rest != "" {
			a.comment = append(a.comment, "storage: "+k+": "+quote(dir))
			c.warnf(kv[0], "%s: storage %s's %s kept as a comment: fixpoint sets only how many instances each unit gets", where, k, rest)
		}
	}
}

// storageCount splits a storage directive — pool, size (with a unit
// suffix) and count (a bare number), comma-separated in any order — into
// its count and a description of what else it says.
func storageCount(dir string) (count, rest string, err error) {
	if strings.TrimSpace(dir) == "" {
		return "", "", fmt.Errorf("empty directive; write e.g. \"3\", \"10G\" or \"ebs,10G,3\"")
	}
	var other []string
	for _, part := range strings.Split(dir, ",") {
		part = strings.TrimSpace(part)
		switch n, err := strconv.Atoi(part); {
		case err == nil && n >= 0:
			if count != "" {
				return "", "", fmt.Errorf("%q gives the count twice", dir)
			}
			count = part
		case len(part) > 1 && strings.ContainsAny(part[len(part)-1:], "MGTPE") && isNumber(part[:len(part)-1]):
			other = append(other, "size")
		case len(part) > 3 && strings.HasSuffix(part, "iB") && isNumber(part[:len(part)-3]):
			other = append(other, "size")
		default:
			other = append(other, "pool")
		}
	}
	return count, strings.Join(other, " and "), nil
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}
