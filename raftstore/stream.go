package raftstore

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/fixpoint/fixpoint/model"
)

// Snapshots are written and read a map entry at a time: at a million units
// the state is gigabytes of JSON, and holding it whole (once as bytes,
// once more in json's buffer) was a second and third copy of the state in
// memory. The bytes are the same as json.Marshal of the document would
// give (TestStreamedDocumentIsJSONMarshal), so snapshots, backups and
// their readers of either kind agree.

// writeDocument streams the snapshot document of the cluster c at index
// to w: the default environment as "state", as a document written before
// environments holds it, then the others, each without its copy of the
// cluster's fields (model.State.WithoutCopies), which a reader fills from
// the default environment's.
func writeDocument(w io.Writer, index uint64, level model.Level, nodes map[string]nodeInfo, c *model.Cluster, logs *model.BoundedDump[model.LogLine], events *model.BoundedDump[model.Event]) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	head, err := json.Marshal(struct {
		Version int                 `json:"version"`
		Index   uint64              `json:"index"`
		Nodes   map[string]nodeInfo `json:"nodes"`
		Level   model.Level         `json:"level,omitempty"`
	}{snapshotVersion, index, nodes, level})
	if err != nil {
		return fmt.Errorf("encode snapshot header: %w", err)
	}
	bw.Write(head[:len(head)-1])
	bw.WriteString(`,"state":`)
	if c == nil || c.Default == nil {
		bw.WriteString("null")
	} else if err := streamStruct(bw, reflect.ValueOf(c.Default).Elem()); err != nil {
		return fmt.Errorf("encode snapshot state: %w", err)
	}
	if c != nil {
		if err := writeEnvs(bw, c); err != nil {
			return err
		}
	}
	if err := writeDiagnostics(bw, logs, events); err != nil {
		return err
	}
	bw.WriteByte('}')
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write snapshot: %w", err)
	}
	return nil
}

// writeEnvs writes the default environment's uuid, the other
// environments and their tokens, as json.Marshal of document writes them,
// each State a map entry at a time.
func writeEnvs(w *bufio.Writer, c *model.Cluster) error {
	if c.DefaultUUID != "" {
		b, _ := json.Marshal(c.DefaultUUID)
		w.WriteString(`,"default_uuid":`)
		w.Write(b)
	}
	if len(c.Envs) > 0 {
		if err := writeEnvStates(w, c); err != nil {
			return err
		}
	}
	if len(c.Tokens) > 0 {
		b, err := json.Marshal(c.Tokens)
		if err != nil {
			return fmt.Errorf("encode tokens: %w", err)
		}
		w.WriteString(`,"tokens":`)
		w.Write(b)
	}
	return nil
}

// writeEnvStates writes the environments other than the default, each
// State a map entry at a time.
func writeEnvStates(w *bufio.Writer, c *model.Cluster) error {
	w.WriteString(`,"environments":{`)
	for i, name := range c.Names() {
		e := *c.Envs[name]
		st := e.State.WithoutCopies()
		e.State = nil
		// The env's fields as json.Marshal writes them, "state" last.
		head, err := json.Marshal(&e)
		if err != nil {
			return fmt.Errorf("encode environment %s: %w", name, err)
		}
		const tail = `null}`
		if !bytes.HasSuffix(head, []byte(`"state":`+tail)) {
			return fmt.Errorf("encode environment %s: state is not its last field", name)
		}
		if i > 0 {
			w.WriteByte(',')
		}
		key, _ := json.Marshal(name)
		w.Write(key)
		w.WriteByte(':')
		w.Write(head[:len(head)-len(tail)])
		if err := streamStruct(w, reflect.ValueOf(st).Elem()); err != nil {
			return fmt.Errorf("encode environment %s: %w", name, err)
		}
		w.WriteByte('}')
	}
	w.WriteByte('}')
	return nil
}

// streamStruct writes a struct as json.Marshal would, each map field an
// entry at a time.
func streamStruct(w *bufio.Writer, v reflect.Value) error {
	enc := newValueEncoder(w)
	w.WriteByte('{')
	first := true
	for _, f := range jsonFields(v.Type()) {
		fv := v.Field(f.index)
		if f.omitEmpty && isEmpty(fv) {
			continue
		}
		if !first {
			w.WriteByte(',')
		}
		first = false
		key, _ := json.Marshal(f.name)
		w.Write(key)
		w.WriteByte(':')
		if fv.Kind() == reflect.Map && !fv.IsNil() {
			if err := streamMap(w, enc, fv); err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
			continue
		}
		if err := enc.encode(fv.Interface()); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
	}
	w.WriteByte('}')
	return nil
}

// streamMap writes a map with string or integer keys, keys sorted as
// encoding/json sorts them (by their text).
func streamMap(w *bufio.Writer, enc *valueEncoder, m reflect.Value) error {
	type entry struct {
		key string
		val reflect.Value
	}
	entries := make([]entry, 0, m.Len())
	for it := m.MapRange(); it.Next(); {
		k := it.Key()
		var ks string
		switch k.Kind() {
		case reflect.String:
			ks = k.String()
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			ks = strconv.FormatInt(k.Int(), 10)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			ks = strconv.FormatUint(k.Uint(), 10)
		default:
			return fmt.Errorf("map key of kind %s", k.Kind())
		}
		entries = append(entries, entry{ks, it.Value()})
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	w.WriteByte('{')
	for i, e := range entries {
		if i > 0 {
			w.WriteByte(',')
		}
		key, _ := json.Marshal(e.key)
		w.Write(key)
		w.WriteByte(':')
		if err := enc.encode(e.val.Interface()); err != nil {
			return fmt.Errorf("entry %s: %w", e.key, err)
		}
	}
	w.WriteByte('}')
	return nil
}

// valueEncoder writes values as json.Marshal encodes them, through one
// json.Encoder, whose buffer is reused: a value at a time, json.Marshal's
// copies would be as much garbage as the whole snapshot.
type valueEncoder struct {
	enc *json.Encoder
	out newlineDropper
}

func newValueEncoder(w *bufio.Writer) *valueEncoder {
	e := &valueEncoder{out: newlineDropper{w}}
	e.enc = json.NewEncoder(&e.out)
	return e
}

func (e *valueEncoder) encode(v any) error { return e.enc.Encode(v) }

// newlineDropper drops the newline json.Encoder writes after each value
// (in the same Write as the value), so the text is json.Marshal's.
type newlineDropper struct{ w *bufio.Writer }

func (d *newlineDropper) Write(p []byte) (int, error) {
	n := len(p)
	if n > 0 && p[n-1] == '\n' {
		p = p[:n-1]
	}
	_, err := d.w.Write(p)
	return n, err
}

// jsonField is one encoded field of a struct.
type jsonField struct {
	name      string
	index     int
	omitEmpty bool
}

// jsonFields lists a struct's encoded fields in order. The state has
// neither embedded structs nor string-tagged fields, which this does not
// handle; the equality test would show it.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = sf.Name
		}
		out = append(out, jsonField{name: name, index: i, omitEmpty: slices.Contains(strings.Split(opts, ","), "omitempty")})
	}
	return out
}

// isEmpty is encoding/json's omitempty test.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}

// readDocument decodes a snapshot or backup document from r a value at a
// time: the state's maps entry by entry, so that only the decoded state,
// not its text, is ever whole in memory.
func readDocument(r io.Reader) (*document, error) {
	dec := json.NewDecoder(bufio.NewReaderSize(r, 256<<10))
	var d document
	isNull, err := readObject(dec, func(key string) error {
		switch key {
		case "version":
			return dec.Decode(&d.Version)
		case "index":
			return dec.Decode(&d.Index)
		case "nodes":
			return dec.Decode(&d.Nodes)
		case "level":
			return dec.Decode(&d.Level)
		case "state":
			st := &model.State{}
			isNull, err := readStruct(dec, reflect.ValueOf(st).Elem())
			if !isNull {
				d.State = st
			}
			return err
		case "default_uuid":
			return dec.Decode(&d.DefaultUUID)
		case "environments":
			var err error
			d.Envs, err = readEnvs(dec)
			return err
		case "tokens":
			return dec.Decode(&d.Tokens)
		case "logs":
			return dec.Decode(&d.Logs)
		case "events":
			return dec.Decode(&d.Events)
		}
		return skipValue(dec)
	})
	if err != nil {
		return nil, err
	}
	if isNull {
		return nil, errors.New("document is null")
	}
	if tok, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the document: %v", tok)
	}
	return &d, nil
}

// readEnvs reads the environments of a document, each State a map entry
// at a time.
func readEnvs(dec *json.Decoder) (map[string]*model.Env, error) {
	envs := map[string]*model.Env{}
	isNull, err := readObject(dec, func(name string) error {
		e := &model.Env{}
		isNull, err := readObject(dec, func(key string) error {
			switch key {
			case "name":
				return dec.Decode(&e.Name)
			case "uuid":
				return dec.Decode(&e.UUID)
			case "created":
				return dec.Decode(&e.Created)
			case "share":
				return dec.Decode(&e.Share)
			case "state":
				st := &model.State{}
				isNull, err := readStruct(dec, reflect.ValueOf(st).Elem())
				if !isNull {
					e.State = st
				}
				return err
			}
			return skipValue(dec)
		})
		if !isNull {
			envs[name] = e
		}
		return err
	})
	if isNull {
		return nil, err
	}
	return envs, err
}

// readObject reads an object, calling field for each key with the decoder
// at its value; a null reads as no object (isNull).
func readObject(dec *json.Decoder, field func(key string) error) (isNull bool, err error) {
	tok, err := dec.Token()
	if err != nil {
		return false, err
	}
	if tok == nil {
		return true, nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return false, fmt.Errorf("got %v; want an object", tok)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false, err
		}
		key, ok := tok.(string)
		if !ok {
			return false, fmt.Errorf("object key is %v", tok)
		}
		if err := field(key); err != nil {
			return false, fmt.Errorf("%s: %w", key, err)
		}
	}
	_, err = dec.Token() // the closing '}': More said so
	return false, err
}

// readStruct decodes an object into the struct v, map fields entry by
// entry; it reports a JSON null, which leaves v as it is.
func readStruct(dec *json.Decoder, v reflect.Value) (isNull bool, err error) {
	fields := jsonFields(v.Type())
	return readObject(dec, func(key string) error {
		i := slices.IndexFunc(fields, func(f jsonField) bool { return f.name == key })
		if i < 0 {
			// encoding/json matches names case-insensitively too.
			i = slices.IndexFunc(fields, func(f jsonField) bool { return strings.EqualFold(f.name, key) })
		}
		if i < 0 {
			return skipValue(dec)
		}
		fv := v.Field(fields[i].index)
		if fv.Kind() == reflect.Map {
			return readMap(dec, fv)
		}
		return dec.Decode(fv.Addr().Interface())
	})
}

// readMap decodes an object into the map m (string or integer keys), one
// entry at a time; null makes it nil, as encoding/json does.
func readMap(dec *json.Decoder, m reflect.Value) error {
	kt, et := m.Type().Key(), m.Type().Elem()
	if m.IsNil() {
		m.Set(reflect.MakeMap(m.Type()))
	}
	isNull, err := readObject(dec, func(key string) error {
		k := reflect.New(kt).Elem()
		switch kt.Kind() {
		case reflect.String:
			k.SetString(key)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			n, err := strconv.ParseInt(key, 10, kt.Bits())
			if err != nil {
				return fmt.Errorf("map key %q: %w", key, err)
			}
			k.SetInt(n)
		default:
			return fmt.Errorf("map key of kind %s", kt.Kind())
		}
		e := reflect.New(et)
		if err := dec.Decode(e.Interface()); err != nil {
			return err
		}
		m.SetMapIndex(k, e.Elem())
		return nil
	})
	if isNull {
		m.SetZero()
	}
	return err
}

// skipValue reads and drops the next value, as encoding/json drops
// unknown fields.
func skipValue(dec *json.Decoder) error {
	var skip json.RawMessage
	return dec.Decode(&skip)
}
