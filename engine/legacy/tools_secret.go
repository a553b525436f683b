package legacy

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/model"
)

// Juju's secret hook tools (worker/uniter/runner/jujuc/secret-*.go). A
// call reads the universe's secrets with this call's own changes, which
// become the result's Secrets: the engine checks them, the proposing
// server seals their contents, and the state applies them.

var (
	labelFlag       = flagDef{name: "label"}
	secretMetaFlags = []flagDef{labelFlag, {name: "description"}, {name: "expire"}, {name: "rotate"}, {name: "owner"}}
)

func init() {
	for name, t := range map[string]tool{
		"secret-add":      {flags: secretMetaFlags, run: secretTool((*secretWork).add), write: true},
		"secret-set":      {flags: secretMetaFlags, run: secretTool((*secretWork).set), write: true},
		"secret-get":      {flags: []flagDef{labelFlag, {name: "peek", isBool: true}, {name: "refresh", isBool: true}, formatFlag}, run: secretTool((*secretWork).get), write: true},
		"secret-remove":   {flags: []flagDef{{name: "revision"}}, run: secretTool((*secretWork).remove), write: true},
		"secret-grant":    {flags: []flagDef{relationFlag, {name: "unit"}}, run: secretTool((*secretWork).grant), write: true},
		"secret-revoke":   {flags: []flagDef{relationFlag, {name: "app"}, {name: "unit"}}, run: secretTool((*secretWork).revoke), write: true},
		"secret-ids":      {flags: []flagDef{formatFlag}, run: secretTool((*secretWork).ids), keep: keepWrite},
		"secret-info-get": {flags: []flagDef{labelFlag, formatFlag}, run: secretTool((*secretWork).infoGet), keep: keepWrite},
	} {
		tools[name] = t
	}
}

// secretWork is a call's secrets, whose tools are its methods: the
// universe's, as this call changed them, and the changes for the result.
type secretWork struct {
	byID    map[string]*charmapi.Secret // by "secret:<id>"
	changes []charmapi.SecretChange
	// removed are the secrets this hook removed (by "secret:<id>"): Juju
	// keeps a removed secret's metadata for the rest of the hook, so a
	// later secret-remove of it is accepted and changes nothing more.
	removed map[string]bool
}

// secrets returns the call's secrets, copying the universe's on first use.
func (s *session) secrets() *secretWork {
	if s.sec != nil {
		return s.sec
	}
	w := &secretWork{byID: map[string]*charmapi.Secret{}}
	for i := range s.in.u.Secrets {
		c := s.in.u.Secrets[i]
		w.byID[c.ID] = &c
	}
	s.sec = w
	return w
}

// secretTool runs a secret tool on the call's secrets, which it reads
// and writes, and the run's inputs.
func secretTool(run func(w *secretWork, in *inputs, c *call) (any, error)) func(s *session, c *call) (any, error) {
	return func(s *session, c *call) (any, error) { return run(s.secrets(), &s.in, c) }
}

// change returns the pending change op of id, adding one if there is none:
// several calls in one hook coalesce, as Juju 3.6 coalesces them.
func (w *secretWork) change(op, id string) *charmapi.SecretChange {
	for i := range w.changes {
		c := &w.changes[i]
		if c.ID == id && (c.Op == op || op == model.SecretOpSet && c.Op == model.SecretOpAdd) {
			return c
		}
	}
	w.changes = append(w.changes, charmapi.SecretChange{Op: op, ID: id})
	return &w.changes[len(w.changes)-1]
}

// find resolves a secret by id (any of Juju's URI forms) or label, as
// secret-get does; the error says "not found", which ops turns into
// SecretNotFoundError.
func (w *secretWork) find(id, label string) (*charmapi.Secret, error) {
	if id != "" {
		bare, err := model.ParseSecretURI(id)
		if err != nil {
			return nil, usagef("%v", err)
		}
		if sec := w.byID["secret:"+bare]; sec != nil {
			return sec, nil
		}
		return nil, fmt.Errorf("secret %q not found", bare)
	}
	if label == "" {
		return nil, usagef("require either a secret URI or label")
	}
	for _, k := range slices.Sorted(maps.Keys(w.byID)) {
		if w.byID[k].Label == label {
			return w.byID[k], nil
		}
	}
	return nil, fmt.Errorf("secret with label %q not found", label)
}

// ownedSecret finds secret uri in w and refuses it unless the unit may
// manage it: what secret-set, secret-remove, secret-grant and
// secret-revoke act on.
func (w *secretWork) ownedSecret(in *inputs, uri string) (*charmapi.Secret, error) {
	sec, err := w.find(uri, "")
	if err != nil {
		return nil, err
	}
	if err := in.mayManage(sec); err != nil {
		return nil, err
	}
	return sec, nil
}

// secretMeta reads the metadata flags of secret-add and secret-set into
// ch and sec.
func secretMeta(c *call, ch *charmapi.SecretChange, sec *charmapi.Secret, now time.Time) error {
	if c.f.has("label") {
		l := c.f.str("label")
		if err := model.CheckSecretLabel("label", l, model.MaxSecretLabel); err != nil {
			return usagef("%v", err)
		}
		ch.Label, sec.Label = &l, l
	}
	if c.f.has("description") {
		d := c.f.str("description")
		if err := model.CheckSecretLabel("description", d, model.MaxSecretDescription); err != nil {
			return usagef("%v", err)
		}
		ch.Description, sec.Description = &d, d
	}
	if c.f.has("rotate") {
		r := c.f.str("rotate")
		if err := model.CheckRotatePolicy(r); err != nil {
			return usagef("rotate policy %q not valid", r)
		}
		ch.Rotate, sec.Rotate = &r, r
	}
	if c.f.has("expire") {
		at, err := parseExpire(c.f.str("expire"), now)
		if err != nil {
			return err
		}
		ch.Expire, sec.Expire = &at, at
	}
	return nil
}

// parseExpire reads --expire as Juju does: an RFC 3339 time, one without
// a zone (UTC), or a positive duration from now.
func parseExpire(spec string, now time.Time) (string, error) {
	t, err := time.Parse(time.RFC3339, spec)
	if err != nil {
		t, err = time.Parse("2006-01-02T15:04:05", spec)
	}
	if err != nil {
		d, derr := time.ParseDuration(spec)
		if derr != nil {
			return "", usagef("expire time or duration %q not valid", spec)
		}
		if d <= 0 {
			return "", usagef("negative expire duration %q not valid", spec)
		}
		t = now.Add(d)
	}
	return t.UTC().Format(time.RFC3339), nil
}

// parseSecretContent reads key=value, key#base64=VALUE and key#file=PATH
// arguments. Errors name the key, never the value.
func parseSecretContent(args []string) (map[string]string, error) {
	if len(args) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			return nil, usagef("expected key=value, got an argument without \"=\" (%d bytes)", len(a))
		}
		switch {
		case strings.HasSuffix(k, "#base64"):
			k = strings.TrimSuffix(k, "#base64")
			b, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				return nil, usagef("secret key %q: value is not base64", k)
			}
			if !utf8.Valid(b) {
				return nil, usagef("secret key %q: fixpoint keeps secret values as text; this one is binary", k)
			}
			v = string(b)
		case strings.HasSuffix(k, "#file"):
			k = strings.TrimSuffix(k, "#file")
			b, err := readSecretFile(v)
			if err != nil {
				return nil, fmt.Errorf("secret key %q: %w", k, err)
			}
			v = string(b)
		}
		if _, dup := out[k]; dup {
			return nil, usagef("secret key %q given twice", k)
		}
		out[k] = v
	}
	if err := model.CheckSecretContent(out); err != nil {
		return nil, usagef("%v", err)
	}
	return out, nil
}

// readSecretFile reads a #file value, at most one byte over Juju's limit
// so that a large file is refused without being read whole.
func readSecretFile(path string) ([]byte, error) {
	if !strings.HasPrefix(path, "/") {
		return nil, usagef("file %q: give an absolute path", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, errors.Unwrap(err))
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, model.MaxSecretValue+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > model.MaxSecretValue {
		return nil, usagef("file %s is over %d bytes, the limit of a secret value", path, model.MaxSecretValue)
	}
	if !utf8.Valid(b) {
		return nil, usagef("file %s is binary; fixpoint keeps secret values as text", path)
	}
	return b, nil
}

// add is `secret-add [--owner application|unit] [--label L]
// [--description D] [--expire E] [--rotate P] key=value...`: it prints
// the new secret's URI.
func (w *secretWork) add(in *inputs, c *call) (any, error) {
	owner := c.f.str("owner")
	if owner == "" {
		owner = model.SecretOwnerApp
	}
	if owner != model.SecretOwnerApp && owner != model.SecretOwnerUnit {
		return nil, usagef("secret owner %q not valid", owner)
	}
	if len(c.f.args) == 0 {
		return nil, usagef("missing secret value or filename")
	}
	content, err := parseSecretContent(c.f.args)
	if err != nil {
		return nil, err
	}
	if owner == model.SecretOwnerApp && !in.u.Leader {
		return nil, errors.New("cannot create secret owned by the application: this unit is not the leader")
	}
	sec := &charmapi.Secret{Owner: owner, Revision: 1, Latest: 1, Revisions: []int{1}, Content: content}
	ch := charmapi.SecretChange{Op: model.SecretOpAdd, Owner: owner, Content: content}
	if err := secretMeta(c, &ch, sec, time.Now()); err != nil {
		return nil, err
	}
	if sec.Label != "" {
		if other, err := w.find("", sec.Label); err == nil && other.Owner != "" {
			return nil, fmt.Errorf("secret with label %q already exists", sec.Label)
		}
	}
	bare, err := model.NewSecretID(func(b []byte) error { _, err := rand.Read(b); return err })
	if err != nil {
		return nil, err
	}
	sec.ID, ch.ID = "secret:"+bare, "secret:"+bare
	w.byID[sec.ID] = sec
	w.changes = append(w.changes, ch)
	return sec.ID, nil
}

// set is `secret-set ID [flags] [key=value...]`: a new revision
// when content is given (one per hook however often it is called), and
// new metadata.
func (w *secretWork) set(in *inputs, c *call) (any, error) {
	if len(c.f.args) == 0 {
		return nil, usagef("missing secret URI")
	}
	if len(c.f.args) == 1 && len(c.f.values) == 0 {
		return nil, usagef("at least one attribute to update must be specified")
	}
	sec, err := w.ownedSecret(in, c.f.args[0])
	if err != nil {
		return nil, err
	}
	content, err := parseSecretContent(c.f.args[1:])
	if err != nil {
		return nil, err
	}
	ch := w.change(model.SecretOpSet, sec.ID)
	if err := secretMeta(c, ch, sec, time.Now()); err != nil {
		return nil, err
	}
	if content != nil {
		if ch.Content == nil {
			// The first new content of this hook: a new revision.
			sec.Latest++
			sec.Revisions = append(sec.Revisions, sec.Latest)
		}
		sec.Revision, sec.Content, ch.Content = sec.Latest, content, content
	}
	return noOutput{}, nil
}

// get is `secret-get [ID] [--label L] [--peek|--refresh] [KEY]`.
func (w *secretWork) get(in *inputs, c *call) (any, error) {
	args := c.f.args
	id, key := "", ""
	if len(args) > 0 && (!c.f.has("label") || strings.HasPrefix(args[0], "secret:") || model.CheckSecretID(args[0]) == nil) {
		// With --label, a first argument that is no secret id is the key.
		id, args = args[0], args[1:]
	}
	if len(args) > 0 {
		key, args = args[0], args[1:]
	}
	if err := checkEmpty(args); err != nil {
		return nil, err
	}
	if c.f.bool("peek") && c.f.bool("refresh") {
		return nil, usagef("specify one of --peek or --refresh but not both")
	}
	label := c.f.str("label")
	sec, err := w.find(id, label)
	if err != nil {
		return nil, err
	}
	content := sec.Content
	if sec.Owner == "" {
		// A consumer reads the revision it tracks; its first read, or a
		// refresh, tracks the latest; a peek reads it without tracking.
		tr := w.change(model.SecretOpTrack, sec.ID)
		if id != "" && label != "" && sec.Label != label {
			sec.Label, tr.Label = label, &label
		}
		if sec.Revision == 0 || c.f.bool("refresh") || c.f.bool("peek") {
			content = sec.LatestContent
			if sec.Revision == sec.Latest {
				content = sec.Content
			}
		}
		if sec.Revision == 0 || c.f.bool("refresh") {
			sec.Revision, sec.Content, tr.Revision = sec.Latest, content, sec.Latest
		}
		if tr.Revision == 0 && tr.Label == nil {
			w.changes = slices.DeleteFunc(w.changes, func(x charmapi.SecretChange) bool {
				return x.Op == model.SecretOpTrack && x.ID == sec.ID && x.Revision == 0 && x.Label == nil
			})
		}
	} else if id != "" && label != "" && sec.Label != label {
		if err := in.mayManage(sec); err != nil {
			return nil, err
		}
		ch := w.change(model.SecretOpSet, sec.ID)
		sec.Label, ch.Label = label, &label
	}
	if content == nil {
		return nil, fmt.Errorf("secret %s: its content is not available: the control plane holds no cluster key that opens it", sec.ID)
	}
	if key != "" {
		v, ok := content[key]
		if !ok {
			return nil, fmt.Errorf("secret %s has no key %q", sec.ID, key)
		}
		return v, nil
	}
	return maps.Clone(content), nil
}

// remove is `secret-remove ID [--revision N]`.
func (w *secretWork) remove(in *inputs, c *call) (any, error) {
	if len(c.f.args) != 1 {
		return nil, usagef("give one secret URI")
	}
	rev := 0
	if c.f.has("revision") {
		n, err := strconv.Atoi(c.f.str("revision"))
		if err != nil || n < 1 {
			return nil, usagef("revision %q not valid", c.f.str("revision"))
		}
		rev = n
	}
	if bare, err := model.ParseSecretURI(c.f.args[0]); err == nil && w.removed["secret:"+bare] {
		return noOutput{}, nil
	}
	sec, err := w.ownedSecret(in, c.f.args[0])
	if err != nil {
		return nil, err
	}
	if rev != 0 && !slices.Contains(sec.Revisions, rev) {
		return nil, fmt.Errorf("secret revision %s/%d not found", sec.ID, rev)
	}
	w.changes = append(w.changes, charmapi.SecretChange{Op: model.SecretOpRemove, ID: sec.ID, Revision: rev})
	if rev == 0 || len(sec.Revisions) == 1 {
		// Removing its last revision removes the secret, as the model
		// does when it applies the change.
		delete(w.byID, sec.ID)
		if w.removed == nil {
			w.removed = map[string]bool{}
		}
		w.removed[sec.ID] = true
		return noOutput{}, nil
	}
	sec.Revisions = slices.DeleteFunc(slices.Clone(sec.Revisions), func(r int) bool { return r == rev })
	sec.Obsolete = slices.DeleteFunc(slices.Clone(sec.Obsolete), func(r int) bool { return r == rev })
	return noOutput{}, nil
}

// grant is `secret-grant ID -r RELATION [--unit UNIT]`.
func (w *secretWork) grant(in *inputs, c *call) (any, error) {
	return w.access(in, c, model.SecretOpGrant)
}

// revoke is `secret-revoke ID [-r RELATION] [--app APP] [--unit UNIT]`.
func (w *secretWork) revoke(in *inputs, c *call) (any, error) {
	return w.access(in, c, model.SecretOpRevoke)
}

func (w *secretWork) access(in *inputs, c *call, op string) (any, error) {
	if len(c.f.args) != 1 {
		return nil, usagef("give one secret URI")
	}
	sec, err := w.ownedSecret(in, c.f.args[0])
	if err != nil {
		return nil, err
	}
	ch := charmapi.SecretChange{Op: op, ID: sec.ID, Unit: c.f.str("unit")}
	switch {
	case c.f.has("relation"):
		ident, ok := in.relationByID(c.f.str("relation"))
		if _, live := in.rels[ident]; !ok || !live {
			return nil, fmt.Errorf("relation %q not found", c.f.str("relation"))
		}
		ch.Relation = ident
		if u := ch.Unit; u != "" && model.ServiceOf(u) != in.rels[ident].RemoteService {
			return nil, fmt.Errorf("unit %q is not in relation %s", u, ident)
		}
	case op == model.SecretOpGrant:
		return nil, usagef("missing relation")
	case c.f.has("app"):
		ch.App = c.f.str("app")
	case ch.Unit == "":
		return nil, usagef("give the relation, the application or the unit to revoke")
	}
	w.changes = append(w.changes, ch)
	return noOutput{}, nil
}

// ids is `secret-ids`: the URIs of the secrets the unit owns, its
// own and, all units of it, its application's.
func (w *secretWork) ids(in *inputs, c *call) (any, error) {
	if err := checkEmpty(c.f.args); err != nil {
		return nil, err
	}
	out := []string{}
	for _, id := range slices.Sorted(maps.Keys(w.byID)) {
		if w.byID[id].Owner != "" {
			out = append(out, id)
		}
	}
	return out, nil
}

// infoGet is `secret-info-get [ID] [--label L]`: an owner's view of
// a secret's metadata, keyed by its bare id, as Juju prints it.
func (w *secretWork) infoGet(in *inputs, c *call) (any, error) {
	id := ""
	if len(c.f.args) > 0 {
		id = c.f.args[0]
		if err := checkEmpty(c.f.args[1:]); err != nil {
			return nil, err
		}
	}
	if id != "" && c.f.has("label") {
		return nil, usagef("specify either a secret URI or label but not both")
	}
	sec, err := w.find(id, c.f.str("label"))
	if err != nil {
		return nil, err
	}
	if sec.Owner == "" {
		return nil, fmt.Errorf("secret %q not found: secret-info-get reads only the secrets this unit owns", strings.TrimPrefix(sec.ID, "secret:"))
	}
	info := map[string]any{"revision": sec.Latest, "owner": sec.Owner}
	for k, v := range map[string]string{"label": sec.Label, "description": sec.Description, "expiry": sec.Expire, "rotation": sec.Rotate, "rotates": sec.NextRotate} {
		if v != "" {
			info[k] = v
		}
	}
	return map[string]any{strings.TrimPrefix(sec.ID, "secret:"): info}, nil
}
