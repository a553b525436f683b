package bundle

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Overlays. A bundle's later YAML documents, and overlay files after
// them, are merged onto its first document in order, as Juju's
// ReadAndMergeBundleData does:
//   - relations are appended; machines are replaced one by one;
//   - an application (or saas entry) not in the bundle is added; one given
//     an empty value is removed, with the relations naming it;
//   - in an application, a map (options, annotations, ...) is merged key by
//     key, a key given an empty value removed; any other field, or a map
//     given an empty value, replaces the bundle's;
//   - any other top-level field replaces the bundle's.
// exposed-endpoints and offers may appear only in overlays.

// Overlay is one overlay file.
type Overlay struct {
	// File is its name as messages show it.
	File string
	// Src is its contents: one or more YAML documents.
	Src []byte
}

// documents decodes every YAML document of src, each a mapping.
func (c *conv) documents(file string, src []byte) ([]*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var docs []*yaml.Node
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", file, err)
		}
		root := deref(&doc)
		if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
			root = deref(root.Content[0])
		}
		if root.Kind != yaml.MappingNode {
			return nil, &Error{Problems: []Problem{{file, root.Line, root.Column, "a bundle or overlay document is a mapping with applications: and relations:"}}}
		}
		docs = append(docs, root)
	}
}

// overlaid reads the bundle and its overlays and returns the bundle with
// every overlay merged onto it, in order. Nodes that come from another
// file are noted, so problems name the file they are in.
func (c *conv) overlaid(src []byte) (*yaml.Node, error) {
	docs, err := c.documents(c.o.File, src)
	if err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%s: the bundle is empty", c.o.File)
	}
	base, overlays := docs[0], docs[1:]
	c.overlay = map[*yaml.Node]string{}
	for _, d := range overlays {
		mark(d, c.o.File, c.overlay)
	}
	for _, o := range c.o.Overlays {
		ds, err := c.documents(o.File, o.Src)
		if err != nil {
			return nil, err
		}
		for _, d := range ds {
			mark(d, o.File, c.overlay)
		}
		overlays = append(overlays, ds...)
	}
	removed := map[string]bool{}
	for _, o := range overlays {
		mergeBundle(base, o, removed)
	}
	if len(removed) > 0 {
		dropRelations(base, removed)
	}
	return base, nil
}

// mark notes every node under n as from file (an overlay).
func mark(n *yaml.Node, file string, files map[*yaml.Node]string) {
	if n == nil || files[n] != "" {
		return
	}
	files[n] = file
	for _, m := range n.Content {
		mark(m, file, files)
	}
}

// fileOf is the file n is in.
func (c *conv) fileOf(n *yaml.Node) string {
	if f := c.overlay[n]; f != "" {
		return f
	}
	return c.o.File
}

// mergeBundle merges the overlay document o onto base.
func mergeBundle(base, o *yaml.Node, removed map[string]bool) {
	for _, kv := range pairs(o) {
		k, v := kv[0], deref(kv[1])
		switch k.Value {
		case "applications", "saas":
			into := child(base, k)
			if empty(v) {
				continue
			}
			for _, app := range pairs(v) {
				spec := deref(app[1])
				switch cur := lookup(into, app[0].Value); {
				case empty(spec):
					remove(into, app[0].Value)
					removed[app[0].Value] = true
				case cur != nil && cur.Kind == yaml.MappingNode && spec.Kind == yaml.MappingNode:
					mergeApplication(cur, spec)
				default:
					set(into, app[0], spec)
				}
			}
		case "relations":
			rels := lookup(base, "relations")
			if rels == nil || rels.Kind != yaml.SequenceNode || v.Kind != yaml.SequenceNode {
				set(base, k, v)
				continue
			}
			rels.Content = append(rels.Content, v.Content...)
		case "machines":
			into := child(base, k)
			for _, m := range pairs(v) {
				if val := deref(m[1]); val.Kind == yaml.ScalarNode && val.Tag == "!!null" {
					remove(into, m[0].Value)
				} else {
					set(into, m[0], m[1])
				}
			}
		default:
			set(base, k, v)
		}
	}
}

// mergeApplication merges an overlay's application spec onto the
// bundle's.
func mergeApplication(base, o *yaml.Node) {
	for _, kv := range pairs(o) {
		k, v := kv[0], deref(kv[1])
		cur := lookup(base, k.Value)
		switch {
		case empty(v):
			remove(base, k.Value)
		case cur != nil && cur.Kind == yaml.MappingNode && v.Kind == yaml.MappingNode:
			for _, e := range pairs(v) {
				if val := deref(e[1]); val.Kind == yaml.ScalarNode && val.Tag == "!!null" {
					remove(cur, e[0].Value)
				} else {
					set(cur, e[0], e[1])
				}
			}
		default:
			set(base, k, v)
		}
	}
}

// dropRelations removes the relations naming a removed application.
func dropRelations(base *yaml.Node, removed map[string]bool) {
	rels := lookup(base, "relations")
	if rels == nil || rels.Kind != yaml.SequenceNode {
		return
	}
	kept := rels.Content[:0]
	for _, r := range rels.Content {
		drop := false
		for _, e := range deref(r).Content {
			app, _, _ := strings.Cut(scalar(e), ":")
			drop = drop || removed[app]
		}
		if !drop {
			kept = append(kept, r)
		}
	}
	rels.Content = kept
}

// empty reports whether an overlay value removes what it names: null, or
// an empty scalar.
func empty(n *yaml.Node) bool {
	return n == nil || n.Kind == yaml.ScalarNode && (n.Tag == "!!null" || n.Value == "" && n.Style == 0)
}

// lookup is the value of key in the mapping m, or nil.
func lookup(m *yaml.Node, key string) *yaml.Node {
	for _, kv := range pairs(m) {
		if kv[0].Value == key {
			return deref(kv[1])
		}
	}
	return nil
}

// child is the mapping under key in m, made when m has none.
func child(m *yaml.Node, key *yaml.Node) *yaml.Node {
	if c := lookup(m, key.Value); c != nil && c.Kind == yaml.MappingNode {
		return c
	}
	c := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: key.Line, Column: key.Column}
	set(m, key, c)
	return c
}

// set makes key's value v in the mapping m, replacing any it had.
func set(m, key, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key.Value {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, key, v)
}

// remove deletes key from the mapping m.
func remove(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}
