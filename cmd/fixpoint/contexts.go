package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Saved contexts: where a control plane is and how to talk to it, kept by
// `fixpoint login` as kubeconfig and Juju's controllers.yaml keep theirs,
// so that commands need no --controller, --token-file and --tls-ca. The
// file holds the operator token itself, readable by its owner only (0600
// in a 0700 directory): a path to the token file would break when the
// token is on another machine (a server's data dir) or moves, and the
// token is no safer in the file it names, which is 0600 too. The CA is
// kept as the absolute path given, since it is not secret and a renewed
// CA file is then picked up.

// contextsFile is the file under the user's config dir
// (os.UserConfigDir()/fixpoint/) that keeps the contexts.
const contextsFile = "contexts.json"

// maxContextsFile bounds what the contexts file may hold.
const maxContextsFile = 1 << 20

// savedContext is one control plane as login saved it.
type savedContext struct {
	Addrs []string `json:"addrs"`
	Token string   `json:"token"`
	// CA is the absolute path of the CA certificate (PEM), for HTTPS.
	CA string `json:"ca,omitempty"`
	// Env is the environment the context's environment-scoped commands
	// use when neither -e/--env nor $FIXPOINT_ENV names one ("" the
	// default environment).
	Env string `json:"env,omitempty"`
}

// contexts is the content of contextsFile: the contexts by name and the
// one commands use when none is named.
type contexts struct {
	Current  string                   `json:"current,omitempty"`
	Contexts map[string]*savedContext `json:"contexts"`
}

// contextsPath is where the contexts are kept.
func contextsPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("find the user's config dir for saved contexts: %w (set XDG_CONFIG_HOME or HOME)", err)
	}
	return filepath.Join(dir, "fixpoint", contextsFile), nil
}

// loadContexts reads the contexts at path; a missing file is none. A file
// others may read is refused: it holds tokens.
func loadContexts(path string) (*contexts, error) {
	cs := &contexts{Contexts: map[string]*savedContext{}}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cs, nil
	}
	if err != nil {
		return nil, fmt.Errorf("saved contexts: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("saved contexts %s: %w", path, err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("saved contexts %s has mode %04o: others than its owner can read the tokens in it; run `chmod 600 %s`", path, perm, path)
	}
	if fi.Size() > maxContextsFile {
		return nil, fmt.Errorf("saved contexts %s is larger than %d bytes", path, maxContextsFile)
	}
	if err := json.NewDecoder(f).Decode(cs); err != nil {
		return nil, fmt.Errorf("saved contexts %s: %w (fix or remove it, then fixpoint login again)", path, err)
	}
	if cs.Contexts == nil {
		cs.Contexts = map[string]*savedContext{}
	}
	return cs, nil
}

// save writes cs to path, owner only: the directory 0700, the file 0600,
// replaced whole.
func (cs *contexts) save(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("save contexts: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("save contexts: %w", err)
	}
	data, err := json.MarshalIndent(cs, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".contexts-*")
	if err != nil {
		return fmt.Errorf("save contexts: %w", err)
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600.
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("save contexts: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("save contexts: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("save contexts: %w", err)
	}
	return nil
}

// names lists the contexts' names, sorted.
func (cs *contexts) names() []string { return slices.Sorted(maps.Keys(cs.Contexts)) }

// checkContextName refuses names that would not read well in a list or
// an environment variable.
func checkContextName(name string) error {
	if name == "" || len(name) > 63 {
		return fmt.Errorf("context name %q: use 1 to 63 letters, digits, '-', '_' or '.'", name)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return fmt.Errorf("context name %q has %q: use letters, digits, '-', '_' or '.'", name, c)
		}
	}
	return nil
}

// chosenContext is the saved context a command uses, and why, or nil:
// --context, else none when --data-dir was given, else
// $FIXPOINT_CONTEXT, else the current one (the last login) when no
// address was given by --controller or $FIXPOINT_ADDR. A named context
// that is not saved is an error naming those that are.
func (r *remote) chosenContext(addrGiven bool) (*savedContext, string, error) {
	name, from := r.context, "--context"
	if name == "" {
		if r.dataDirSet {
			return nil, "", nil
		}
		name, from = os.Getenv("FIXPOINT_CONTEXT"), "$FIXPOINT_CONTEXT"
	}
	if name == "" && addrGiven {
		return nil, "", nil
	}
	path, err := contextsPath()
	if err != nil {
		if name == "" {
			return nil, "", nil
		}
		return nil, "", err
	}
	cs, err := loadContexts(path)
	if err != nil {
		return nil, "", err
	}
	if name == "" {
		if cs.Current == "" {
			return nil, "", nil
		}
		name, from = cs.Current, "the current context (the last fixpoint login)"
	}
	sc := cs.Contexts[name]
	if sc == nil {
		have := "none is saved"
		if len(cs.Contexts) > 0 {
			have = "saved: " + strings.Join(cs.names(), ", ")
		}
		return nil, "", fmt.Errorf("%s names context %q, which is not saved (%s); save it with fixpoint login ADDR --token-file F --name %s", from, name, have, name)
	}
	return sc, "context " + name, nil
}
