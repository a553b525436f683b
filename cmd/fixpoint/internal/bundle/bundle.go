// Package bundle turns a Juju bundle (bundle.yaml) into a fixpoint
// environment file: applications become services, num_units units,
// options config, relations named relations, local resource files
// resources, storage counts storage. What fixpoint has no counterpart for
// (expose, constraints, placement on Juju machines, channels, ...) is kept
// as a CUE comment beside the service and named in a warning.
//
// It refuses what Juju's bundle parser refuses (unknown keys, a relation
// naming an unknown application or defined twice, a machine no placement
// uses, ...), each problem at its YAML line. It reads no files itself:
// the caller passes the paths' rebasing and include-file reading in.
// Overlays (later documents, overlay files) are merged on first, as Juju
// merges them.
package bundle

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/schemas"
)

// Options are what a conversion needs beyond the bundle's bytes.
type Options struct {
	// File is the bundle's name as messages show it.
	File string
	// Name is the environment's name; "" derives it from File.
	Name string
	// Rebase turns a path written in the bundle (relative to the
	// bundle's directory, or absolute) into the path the environment file
	// writes (relative to its own directory); nil keeps it.
	Rebase func(string) string
	// ReadFile reads a file an option includes (include-file://,
	// include-base64://), relative to the bundle's directory; nil refuses
	// includes.
	ReadFile func(string) ([]byte, error)
	// Subordinate says whether the charm a reference names is
	// subordinate, when the charm can be found (known); a subordinate
	// application may not have units, as Juju's parser says.
	Subordinate func(charm string) (subordinate, known bool)
	// Overlays are merged onto the bundle, after its own later
	// documents, in order (overlay.go).
	Overlays []Overlay
}

// Problem is a refusal or a warning at a line of the bundle.
type Problem struct {
	File      string
	Line, Col int
	Msg       string
}

func (p Problem) String() string {
	return fmt.Sprintf("%s:%d:%d: %s", p.File, p.Line, p.Col, p.Msg)
}

// Error lists every reason a bundle was refused, in line order.
type Error struct{ Problems []Problem }

func (e *Error) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// Result is a converted bundle.
type Result struct {
	// CUE is the environment file.
	CUE []byte
	// Warnings name each thing kept as a comment only.
	Warnings []Problem
}

// Top-level keys of a bundle, as Juju's parser knows them (series and the
// per-machine series are Juju 3's, kept for older bundles), and the
// metadata Charmhub's bundles carry (charmcraft requires name).
var topKeys = []string{"bundle", "applications", "machines", "saas", "series", "default-base", "relations", "tags", "description", "name", "docs", "issues", "source", "website"}

// Convert turns the bundle in src into an environment file.
func Convert(src []byte, o Options) (*Result, error) {
	if o.File == "" {
		o.File = "bundle.yaml"
	}
	c := &conv{o: o, apps: map[string]*app{}}
	root, err := c.overlaid(src)
	if err != nil {
		return nil, err
	}
	c.bundle(root)
	if len(c.problems) > 0 {
		c.sortProblems(c.problems)
		return nil, &Error{Problems: c.problems}
	}
	name := o.Name
	switch {
	case name != "":
	case c.name != "":
		name = nameFrom(c.name)
	default:
		name = nameFrom(fileBase(o.File))
	}
	if err := model.CheckName(model.KindService, name); err != nil {
		return nil, fmt.Errorf("environment name: %v; pass --name NAME (lower-case letters, digits and single dashes)", err)
	}
	c.sortProblems(c.warnings)
	return &Result{CUE: c.write(name), Warnings: c.warnings}, nil
}

// fileBase is the bundle file's name without .yaml, or its directory's
// for the usual bundle.yaml.
func fileBase(file string) string {
	file = strings.ReplaceAll(file, `\`, "/")
	base := strings.TrimSuffix(strings.TrimSuffix(path.Base(file), ".yaml"), ".yml")
	if dir := path.Base(path.Dir(file)); base == "bundle" && dir != "." && dir != "/" {
		return dir
	}
	return base
}

// nameFrom makes an environment name of base: lower-cased, anything but
// letters and digits a dash, a letter first, at most 63 bytes.
func nameFrom(base string) string {
	var b strings.Builder
	dash := true
	for _, r := range strings.ToLower(base) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash:
			b.WriteByte('-')
			dash = true
		}
	}
	name := strings.TrimSuffix(b.String(), "-")
	if name != "" && name[0] >= '0' && name[0] <= '9' {
		name = "env-" + name
	}
	if len(name) > model.MaxNameLen {
		name = strings.TrimSuffix(name[:model.MaxNameLen], "-")
	}
	return name
}

// conv is one conversion: what it found, in the bundle's order.
type conv struct {
	o        Options
	problems []Problem
	warnings []Problem
	// header holds comment lines about the whole bundle.
	header []string
	order  []string
	apps   map[string]*app
	rels   []relation
	// machines are the bundle's machines by id, and whether a placement
	// uses each.
	machines     map[string]*yaml.Node
	machineUsed  map[string]bool
	machineOrder []string
	// name is the bundle's own name (Charmhub's metadata), if any.
	name string
	// overlay notes the nodes that come from an overlay, by file.
	overlay map[*yaml.Node]string
	// placedOn are the placements naming an application.
	placedOn   []placeRef
	kubernetes bool
}

func (c *conv) errf(n *yaml.Node, format string, a ...any) {
	c.problems = append(c.problems, Problem{c.fileOf(n), n.Line, n.Column, fmt.Sprintf(format, a...)})
}

func (c *conv) warnf(n *yaml.Node, format string, a ...any) {
	c.warnings = append(c.warnings, Problem{c.fileOf(n), n.Line, n.Column, "warning: " + fmt.Sprintf(format, a...)})
}

// bundle converts the top-level mapping.
func (c *conv) bundle(root *yaml.Node) {
	var appsNode, relsNode, machinesNode *yaml.Node
	fields := c.fields(root, topKeys, "the bundle")
	if n := fields["bundle"]; n != nil {
		switch v := scalar(n); v {
		case "", "machine":
		case "kubernetes":
			c.kubernetes = true
			c.warnf(n, "a Kubernetes bundle: fixpoint runs charms on its machines, so sidecar charms need their workload containers there")
		default:
			c.errf(n, "bundle: %q is not a bundle type; use kubernetes, or leave it out for machines", v)
		}
	}
	if fields["series"] != nil && fields["default-base"] != nil {
		c.errf(fields["default-base"], "series and default-base cannot both be given; keep default-base")
	}
	if n := fields["name"]; n != nil {
		c.name = scalar(n)
	}
	for _, k := range []string{"name", "description", "tags", "docs", "issues", "source", "website"} {
		if n := fields[k]; n != nil {
			c.header = append(c.header, k+": "+render(n))
		}
	}
	for _, k := range []string{"series", "default-base"} {
		if n := fields[k]; n != nil {
			c.header = append(c.header, k+": "+render(n))
			c.warnf(n, "%s kept as a comment: charms run on the machines registered with fixpoint, whatever their base", k)
		}
	}
	if n := fields["saas"]; n != nil {
		for _, kv := range pairs(n) {
			c.errf(kv[0], "saas %q: cross-model relations are not supported by fixpoint; remove it and the relations naming it", kv[0].Value)
		}
	}
	appsNode, relsNode, machinesNode = fields["applications"], fields["relations"], fields["machines"]
	if appsNode == nil || len(appsNode.Content) == 0 {
		c.errf(root, "the bundle has no applications")
		return
	}
	c.machinesOf(machinesNode)
	if appsNode.Kind != yaml.MappingNode {
		c.errf(appsNode, "applications must map each application name to its charm, units and options")
		return
	}
	for _, kv := range pairs(appsNode) {
		c.application(kv[0], deref(kv[1]))
	}
	c.checkPlacements()
	if relsNode != nil {
		c.relations(relsNode)
	}
	for _, id := range c.machineOrder {
		if !c.machineUsed[id] {
			c.errf(c.machines[id], "machine %q is not referred to by a placement directive (an application's to:); remove it or place a unit on it", id)
		}
	}
}

// machinesOf records the bundle's machines and keeps them as a comment.
func (c *conv) machinesOf(n *yaml.Node) {
	c.machines, c.machineUsed = map[string]*yaml.Node{}, map[string]bool{}
	if n == nil {
		return
	}
	if n.Kind != yaml.MappingNode {
		c.errf(n, "machines must map each machine id to its constraints, annotations and base")
		return
	}
	for _, kv := range pairs(n) {
		id := kv[0].Value
		c.machines[id] = kv[0]
		c.machineOrder = append(c.machineOrder, id)
		if deref(kv[1]).Kind == yaml.MappingNode {
			c.fields(deref(kv[1]), []string{"constraints", "annotations", "base", "series"}, fmt.Sprintf("machine %q", id))
		}
	}
	c.header = append(c.header, "machines: "+render(n))
	c.warnf(n, "machines kept as a comment: fixpoint runs units on the machines registered with it (fixpoint machines), placed by placement:")
}

// fields returns a mapping's values by key, refusing keys not in known
// (with the nearest known one) and keys given twice.
func (c *conv) fields(n *yaml.Node, known []string, where string) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	for _, kv := range pairs(n) {
		k := kv[0].Value
		switch {
		case !slices.Contains(known, k):
			msg := fmt.Sprintf("%s: unknown field %q", where, k)
			if best := schemas.Closest(k, known); best != "" {
				msg += fmt.Sprintf("; did you mean %q?", best)
			} else {
				msg += "; known fields are " + strings.Join(known, ", ")
			}
			c.errf(kv[0], "%s", msg)
		case out[k] != nil:
			c.errf(kv[0], "%s: %s is given twice", where, k)
		default:
			out[k] = deref(kv[1])
		}
	}
	return out
}

// pairs lists a mapping's key and value nodes; anything else has none.
// A merge key (<<: *anchor, or a list of anchors), which Juju's YAML
// parser honours, contributes the keys of the mappings it names that the
// mapping does not give itself.
func pairs(n *yaml.Node) [][2]*yaml.Node { return mergedPairs(n, 0) }

// maxMergeDepth bounds chains of merge keys: an anchor may merge a
// mapping that merges it back, which would otherwise never end.
const maxMergeDepth = 8

func mergedPairs(n *yaml.Node, depth int) [][2]*yaml.Node {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		return nil
	}
	var out, merged [][2]*yaml.Node
	own := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Tag != "!!merge" {
			out = append(out, [2]*yaml.Node{k, v})
			own[k.Value] = true
			continue
		}
		sources := []*yaml.Node{deref(v)}
		if deref(v).Kind == yaml.SequenceNode {
			sources = deref(v).Content
		}
		for _, src := range sources {
			if src = deref(src); src != n && depth < maxMergeDepth {
				merged = append(merged, mergedPairs(src, depth+1)...)
			}
		}
	}
	for _, kv := range merged {
		if !own[kv[0].Value] {
			out = append(out, kv)
			own[kv[0].Value] = true
		}
	}
	return out
}

// deref follows an alias (*name) to the node it names.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// scalar is a scalar node's text; "" for anything else.
func scalar(n *yaml.Node) string {
	if n = deref(n); n.Kind == yaml.ScalarNode {
		return n.Value
	}
	return ""
}

// sortProblems orders problems by file (the bundle's, then each
// overlay's in order), then line and column.
func (c *conv) sortProblems(ps []Problem) {
	rank := map[string]int{c.o.File: 0}
	for i, o := range c.o.Overlays {
		if _, ok := rank[o.File]; !ok {
			rank[o.File] = i + 1
		}
	}
	slices.SortStableFunc(ps, func(a, b Problem) int {
		if rank[a.File] != rank[b.File] {
			return rank[a.File] - rank[b.File]
		}
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return a.Col - b.Col
	})
}
