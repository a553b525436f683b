package schemas

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/cuecontext"

	"github.com/fixpoint/fixpoint/model"
)

// Charm metadata file names.
const (
	CharmFile    = "charm.cue"
	MetadataFile = "metadata.yaml"
	ConfigFile   = "config.yaml"
	// CharmcraftFile is read for metadata where a charm has neither
	// charm.cue nor metadata.yaml (charmcraft 3 keeps it all there).
	CharmcraftFile = "charmcraft.yaml"
)

// charmDoc is #Charm decoded.
type charmDoc struct {
	Name        string                    `json:"name"`
	Summary     string                    `json:"summary"`
	Subordinate bool                      `json:"subordinate"`
	Provides    map[string]model.Endpoint `json:"provides"`
	Requires    map[string]model.Endpoint `json:"requires"`
	Peers       map[string]model.Endpoint `json:"peers"`
	Resources   map[string]model.Resource `json:"resources"`
	Config      struct {
		Options map[string]model.Option `json:"options"`
	} `json:"config"`
	Storage map[string]storageDoc `json:"storage"`
	Actions map[string]*actionDoc `json:"actions"`
}

// LoadCharmMeta reads a charm's metadata from dir: charm.cue, or for old
// charms metadata.yaml and config.yaml, converted to the same shape. Both
// are checked against #Charm; every problem is returned in one *Error at
// file:line:col of the charm's files.
func LoadCharmMeta(dir string) (*model.CharmMeta, error) {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("charm directory %s does not exist", rel(absPath(dir)))
	case err != nil:
		return nil, err
	case !fi.IsDir():
		return nil, fmt.Errorf("charm %s is not a directory", rel(absPath(dir)))
	}
	dir = absPath(dir)
	ctx := cuecontext.New()
	var user cue.Value
	var syntax []*ast.File
	var main string
	switch {
	case exists(filepath.Join(dir, CharmFile)):
		main = filepath.Join(dir, CharmFile)
		user, syntax, err = loadUser(ctx, dir, []string{main})
	case exists(filepath.Join(dir, MetadataFile)):
		main = filepath.Join(dir, MetadataFile)
		user, syntax, err = loadLegacy(ctx, dir)
	case exists(filepath.Join(dir, CharmcraftFile)):
		main = filepath.Join(dir, CharmcraftFile)
		user, syntax, err = loadLegacy(ctx, dir)
	default:
		return nil, fmt.Errorf("%s is not a charm: it has no %s, %s or %s; point charm at a charm directory, or add a %s with at least name: \"...\"", rel(dir), CharmFile, MetadataFile, CharmcraftFile, CharmFile)
	}
	if err != nil {
		return nil, loadError(err)
	}
	def, err := definition(ctx, "#Charm")
	if err != nil {
		return nil, err
	}
	idx := indexFiles(syntax, main)
	v, err := validate(user, def, idx)
	if err != nil {
		return nil, err
	}
	var doc charmDoc
	if err := v.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: decoding charm metadata: %w", rel(main), err)
	}
	meta := &model.CharmMeta{
		Name:        doc.Name,
		Summary:     doc.Summary,
		Subordinate: doc.Subordinate,
		Provides:    doc.Provides,
		Requires:    doc.Requires,
		Peers:       doc.Peers,
		Options:     doc.Config.Options,
		Resources:   doc.Resources,
	}
	for n, r := range meta.Resources {
		if r.Type == "" {
			// Juju's default: a resource without a type is a file.
			r.Type = model.ResourceFile
			meta.Resources[n] = r
		}
	}
	if err := storageMeta(meta, doc.Storage, idx); err != nil {
		return nil, err
	}
	if main != filepath.Join(dir, CharmFile) {
		meta.Actions, err = loadActions(dir, main == filepath.Join(dir, CharmcraftFile))
	} else {
		meta.Actions, err = actionSpecs(doc.Actions, main)
	}
	if err != nil {
		return nil, err
	}
	if err := checkCharm(meta, idx); err != nil {
		return nil, err
	}
	return meta, nil
}

// checkCharm applies the rules the schema cannot state: an endpoint name
// is used once across provides, requires and peers. model's own Validate
// runs last as a safety net, at the file's position.
func checkCharm(meta *model.CharmMeta, idx *posIndex) error {
	e := &Error{}
	seen := map[string]string{}
	for _, role := range []struct {
		name string
		eps  map[string]model.Endpoint
	}{{"provides", meta.Provides}, {"requires", meta.Requires}, {"peers", meta.Peers}} {
		names := make([]string, 0, len(role.eps))
		for n := range role.eps {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if prev, dup := seen[n]; dup {
				path := []string{role.name, n}
				e.Problems = append(e.Problems, problemAt(idx.lookup(path), path,
					fmt.Sprintf("endpoint %q is also declared under %s; endpoint names must be unique within a charm, so rename one", n, prev)))
				continue
			}
			seen[n] = role.name
		}
	}
	if len(e.Problems) == 0 {
		if err := meta.Validate(); err != nil {
			e.Problems = append(e.Problems, problemAt(idx.lookup(nil), nil, err.Error()))
		}
	}
	return e.errOrNil()
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

func exists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}
