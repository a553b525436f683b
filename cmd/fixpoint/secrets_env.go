package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/schemas"
)

// readSecretValues reads the values of the user secrets env declares, by
// secret name then key, from the files (relative to the environment's
// directory) and environment variables it names. The values go only to
// the control plane, in the plan or apply request; an error names the
// secret, the key and the source at its file:line:col, never a value.
func readSecretValues(env *schemas.Env) (map[string]map[string]string, error) {
	if len(env.Env.Secrets) == 0 {
		return nil, nil
	}
	out := map[string]map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(env.Env.Secrets)) {
		spec := env.Env.Secrets[name]
		vals := map[string]string{}
		for _, key := range slices.Sorted(maps.Keys(spec.Content)) {
			src := spec.Content[key]
			v, err := readSecretSource(env.Dir, src)
			if err != nil {
				p := env.Problem(model.Problem{Path: []string{"secrets", name, "content", key}, Msg: fmt.Sprintf("secret %s key %s: %v", name, key, err)})
				return nil, exitf(exitFailed, "%v; nothing was changed", p)
			}
			vals[key] = v
		}
		out[name] = vals
	}
	if err := model.CheckUserSecretsSize(out); err != nil {
		return nil, exitf(exitFailed, "%s: %v; nothing was changed", env.Pos([]string{"secrets"}), err)
	}
	return out, nil
}

// readSecretSource reads one value: a whole file, at most
// model.MaxSecretValue bytes, or an environment variable that is set.
func readSecretSource(dir string, src model.SecretSource) (string, error) {
	if src.Env != "" {
		v, ok := os.LookupEnv(src.Env)
		if !ok {
			return "", fmt.Errorf("%s is not set; export it before apply", src)
		}
		if len(v) > model.MaxSecretValue {
			return "", fmt.Errorf("%s holds %d bytes; a secret value is at most %d", src, len(v), model.MaxSecretValue)
		}
		return v, nil
	}
	path := src.File
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	f, err := os.Open(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", fmt.Errorf("read %s (%s): %v", src, path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, model.MaxSecretValue+1))
	if err != nil {
		return "", fmt.Errorf("read %s (%s): %v", src, path, err)
	}
	if len(b) > model.MaxSecretValue {
		return "", fmt.Errorf("%s (%s) is over %d bytes, the limit of a secret value", src, path, model.MaxSecretValue)
	}
	return string(b), nil
}
