// Package keyring seals secret contents under the cluster key: AES-256-GCM
// from the standard library, keys kept in a server's data dir (0600).
package keyring

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// KeyFile is the cluster key's file in a server's data dir (0600). It
// holds every key the cluster sealed secrets under, the current one
// last: the Raft log, snapshots and backups hold secret contents only
// sealed with them, so a backup is restored with this file beside it.
const KeyFile = "secrets.key"

// Prefix starts every sealed string: version, key id, then
// base64(nonce || AES-256-GCM ciphertext).
const Prefix = "fp1."

// keyLen is AES-256's key size; keyIDLen the hex length of a key id.
const (
	keyLen   = 32
	keyIDLen = 16
)

// Keyring is a server's cluster keys. It seals secret contents with the
// current key and opens them with whichever key sealed them. It is safe
// for concurrent use; a keyring without keys (a joining server before its
// join answer) seals and opens nothing.
type Keyring struct {
	mu   sync.RWMutex
	path string
	keys []clusterKey // the current one last
}

// clusterKey is one AES-256 key and its random id.
type clusterKey struct {
	ID  string `json:"id"`
	Key []byte `json:"key"`
}

// keyringFile is KeyFile's content.
type keyringFile struct {
	Keys []clusterKey `json:"keys"`
}

// Open reads dir's key file; with create, a missing one is made
// with a new key. Without create a missing file gives an empty keyring
// that a join fills (Adopt).
func Open(dir string, create bool) (*Keyring, error) {
	k := &Keyring{path: filepath.Join(dir, KeyFile)}
	data, err := os.ReadFile(k.path)
	switch {
	case err == nil:
		keys, err := decodeKeys(data)
		if err != nil {
			return nil, fmt.Errorf("cluster key %s: %w", k.path, err)
		}
		k.keys = keys
		return k, nil
	case !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("cluster key: %w", err)
	case !create:
		return k, nil
	}
	key, err := newClusterKey()
	if err != nil {
		return nil, err
	}
	k.keys = []clusterKey{key}
	if err := k.save(); err != nil {
		return nil, err
	}
	return k, nil
}

func newClusterKey() (clusterKey, error) {
	key := clusterKey{Key: make([]byte, keyLen)}
	id := make([]byte, keyIDLen/2)
	if _, err := rand.Read(key.Key); err != nil {
		return key, fmt.Errorf("make a cluster key: %w", err)
	}
	if _, err := rand.Read(id); err != nil {
		return key, fmt.Errorf("make a cluster key: %w", err)
	}
	key.ID = hex.EncodeToString(id)
	return key, nil
}

// decodeKeys reads and checks an exported keyring.
func decodeKeys(data []byte) ([]clusterKey, error) {
	var f keyringFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("not a fixpoint keyring: %v", err)
	}
	if len(f.Keys) == 0 || len(f.Keys) > 64 {
		return nil, fmt.Errorf("a keyring holds 1 to 64 keys, not %d", len(f.Keys))
	}
	for _, k := range f.Keys {
		if len(k.Key) != keyLen || len(k.ID) != keyIDLen {
			return nil, errors.New("a key is 32 bytes with a 16-character id")
		}
	}
	return f.Keys, nil
}

// Parse reads a keyring in KeyFile's form into memory, without a file: a
// key kept apart from the servers, checked before it is installed (Keep).
func Parse(data []byte) (*Keyring, error) {
	keys, err := decodeKeys(data)
	if err != nil {
		return nil, err
	}
	return &Keyring{keys: keys}, nil
}

// Keep writes the keyring as dir's KeyFile (0600), replacing any there,
// and keeps it there from now on.
func (k *Keyring) Keep(dir string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.path = filepath.Join(dir, KeyFile)
	return k.save()
}

// SealedBy is the id of the key that sealed a content Seal returned, ""
// when it is not one.
func SealedBy(sealed string) string {
	rest, ok := strings.CutPrefix(sealed, Prefix)
	id, _, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 {
		return ""
	}
	return id
}

// NewMemoryKeyring is a keyring with a new key that lives in memory only,
// for a control plane simulated in one process (engine/sim).
func NewMemoryKeyring() (*Keyring, error) {
	key, err := newClusterKey()
	if err != nil {
		return nil, err
	}
	return &Keyring{keys: []clusterKey{key}}, nil
}

// save writes the keyring to its file, 0600, replacing it atomically; a
// memory keyring has none.
func (k *Keyring) save() error {
	if k.path == "" {
		return nil
	}
	data, err := json.Marshal(keyringFile{Keys: k.keys})
	if err != nil {
		return err
	}
	tmp := k.path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("keep the cluster key in %s: %w", k.path, err)
	}
	if err := os.Rename(tmp, k.path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("keep the cluster key in %s: %w", k.path, err)
	}
	return nil
}

// Export is the keyring as its file holds it, for a joining server.
func (k *Keyring) Export() []byte {
	k.mu.RLock()
	defer k.mu.RUnlock()
	if len(k.keys) == 0 {
		return nil
	}
	data, _ := json.Marshal(keyringFile{Keys: k.keys})
	return data
}

// Adopt takes the keys a join brought (Export's form) when this keyring
// has none, and keeps them in the key file.
func (k *Keyring) Adopt(data []byte) error {
	keys, err := decodeKeys(data)
	if err != nil {
		return fmt.Errorf("the cluster key from the join: %w", err)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.keys) > 0 {
		return nil
	}
	k.keys = keys
	return k.save()
}

// Empty reports whether the keyring has no key yet.
func (k *Keyring) Empty() bool {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return len(k.keys) == 0
}

// Current is the id of the key new contents are sealed with.
func (k *Keyring) Current() string {
	k.mu.RLock()
	defer k.mu.RUnlock()
	if len(k.keys) == 0 {
		return ""
	}
	return k.keys[len(k.keys)-1].ID
}

// NewKey makes a new key and returns it, not yet added (AddKey): a
// rotation replicates it, wrapped in the current one, to every server.
func (k *Keyring) NewKey() (id string, key []byte, err error) {
	c, err := newClusterKey()
	return c.ID, c.Key, err
}

// AddKey makes key the current one, keeping the others to open what they
// sealed. Adding the current key again changes nothing.
func (k *Keyring) AddKey(id string, key []byte) error {
	if len(key) != keyLen || len(id) != keyIDLen {
		return errors.New("a key is 32 bytes with a 16-character id")
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, c := range k.keys {
		if c.ID == id {
			return nil
		}
	}
	k.keys = append(k.keys, clusterKey{ID: id, Key: append([]byte(nil), key...)})
	return k.save()
}

func gcm(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// Seal encrypts plain with the current key, bound to aad.
func (k *Keyring) Seal(aad string, plain []byte) (string, error) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	if len(k.keys) == 0 {
		return "", errors.New("seal: this server has no cluster key yet")
	}
	cur := k.keys[len(k.keys)-1]
	return sealWith(cur, aad, plain)
}

func sealWith(c clusterKey, aad string, plain []byte) (string, error) {
	aead, err := gcm(c.Key)
	if err != nil {
		return "", fmt.Errorf("seal: %w", err)
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("seal: %w", err)
	}
	out := aead.Seal(nonce, nonce, plain, []byte(c.ID+"|"+aad))
	return Prefix + c.ID + "." + base64.RawStdEncoding.EncodeToString(out), nil
}

// Open decrypts what Seal returned for the same aad. Its errors say which
// key is missing or that the content does not open, never what it holds.
func (k *Keyring) Open(aad, sealed string) ([]byte, error) {
	rest, ok := strings.CutPrefix(sealed, Prefix)
	id, body, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 {
		return nil, errors.New("not a sealed content")
	}
	k.mu.RLock()
	var key []byte
	for _, c := range k.keys {
		if c.ID == id {
			key = c.Key
		}
	}
	k.mu.RUnlock()
	if key == nil {
		return nil, fmt.Errorf("sealed with cluster key %s, which this server does not hold (copy %s from a server that does)", id, KeyFile)
	}
	raw, err := base64.RawStdEncoding.DecodeString(body)
	if err != nil {
		return nil, errors.New("not a sealed content")
	}
	aead, err := gcm(key)
	if err != nil {
		return nil, err
	}
	if len(raw) < aead.NonceSize() {
		return nil, errors.New("not a sealed content")
	}
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(id+"|"+aad))
	if err != nil {
		return nil, fmt.Errorf("sealed content does not open under cluster key %s: it was altered or sealed for another secret", id)
	}
	return plain, nil
}

// Only is a keyring holding just the key id, in memory: what a rotation
// seals the secrets with before every server holds the key.
func Only(id string, key []byte) *Keyring {
	return &Keyring{keys: []clusterKey{{ID: id, Key: append([]byte(nil), key...)}}}
}
