package bundle

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/schemas"
)

// relation is one converted relation: its name and its two endpoints as
// the bundle writes them ("app" or "app:endpoint").
type relation struct {
	name string
	ends [2]string
}

// relations converts the relations list, refusing what Juju's parser
// refuses: a relation of other than two endpoints, an unknown
// application, an application related to itself, a relation given twice
// (in either order).
func (c *conv) relations(n *yaml.Node) {
	if n.Kind != yaml.SequenceNode {
		c.errf(n, "relations must be a list of pairs, e.g. - [\"wordpress:db\", \"mysql:db\"]")
		return
	}
	seen := map[[2]string]int{}
	names := map[string]bool{}
	for _, r := range n.Content {
		r = deref(r)
		if r.Kind != yaml.SequenceNode || len(r.Content) != 2 {
			c.errf(r, "relation %s has %d endpoint(s), not 2", render(r), len(r.Content))
			continue
		}
		var ends [2]string
		ok := true
		for i, e := range r.Content {
			ends[i] = scalar(e)
			ok = c.endpoint(deref(e)) && ok
		}
		if !ok {
			continue
		}
		a, _, _ := strings.Cut(ends[0], ":")
		b, _, _ := strings.Cut(ends[1], ":")
		if a == b {
			c.errf(r, "relation %s relates application %q to itself; a peer relation needs no entry", render(r), a)
			continue
		}
		key := ends
		if key[0] > key[1] {
			key[0], key[1] = key[1], key[0]
		}
		if line, dup := seen[key]; dup {
			c.errf(r, "relation %s is defined more than once (first at line %d); remove one", render(r), line)
			continue
		}
		seen[key] = r.Line
		c.rels = append(c.rels, relation{name: model.NameRelation(ends, names), ends: ends})
	}
}

// checkPlacements refuses placements naming an application the bundle
// does not define.
func (c *conv) checkPlacements() {
	for _, p := range c.placedOn {
		if c.apps[p.target] == nil {
			c.errf(p.n, "%s: placement %q names application %q, which the bundle does not define", p.where, scalar(p.n), p.target)
		}
	}
}

// endpoint checks one "app" or "app:endpoint".
func (c *conv) endpoint(e *yaml.Node) bool {
	s := scalar(e)
	if e.Kind != yaml.ScalarNode || s == "" {
		c.errf(e, "a relation endpoint is \"application\" or \"application:endpoint\"")
		return false
	}
	app, ep, hasEP := strings.Cut(s, ":")
	if hasEP {
		if err := model.CheckName(model.KindEndpoint, ep); err != nil {
			c.errf(e, "relation endpoint %q: %v", s, err)
			return false
		}
	}
	if c.apps[app] == nil {
		msg := fmt.Sprintf("relation endpoint %q names application %q, which the bundle does not define", s, app)
		if best := schemas.Closest(app, c.order); best != "" {
			msg += fmt.Sprintf("; did you mean %q?", best)
		}
		c.errf(e, "%s", msg)
		return false
	}
	return true
}
