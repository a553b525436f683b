package charm

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/schemas"
)

// readResources reads the files a service's resources name (relative to
// the environment's directory) and returns the resources whose file was
// read and their sha256 digests by resource name; each file's absolute
// path goes into files by digest. A file that is missing, not a regular
// file or over model.MaxResourceSize is a problem at its line, and its
// resource is left out, so that it is reported once.
func readResources(env *schemas.Env, service string, res map[string]string, files map[string]string, problems *schemas.Error) (map[string]string, map[string]string) {
	if len(res) == 0 {
		return res, nil
	}
	kept, out := map[string]string{}, map[string]string{}
	for _, n := range slices.Sorted(maps.Keys(res)) {
		path := res[n]
		if !filepath.IsAbs(path) {
			path = filepath.Join(env.Dir, path)
		}
		path = filepath.Clean(path)
		digest, err := FileDigest(path, "the environment file")
		if err != nil {
			problems.Problems = append(problems.Problems, env.Problem(model.Problem{
				Path: []string{"services", service, "resources", n},
				Msg:  fmt.Sprintf("resource %s: %v", n, err),
			}))
			continue
		}
		kept[n], out[n] = res[n], digest
		files[digest] = path
	}
	return kept, out
}

// FileDigest is the sha256 of a resource file, refused when it is not a
// regular file or is larger than model.MaxResourceSize. base names what a
// relative path was relative to, for the message of a missing file.
func FileDigest(path, base string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		if os.IsNotExist(err) {
			return "", fmt.Errorf("file %s does not exist; the path is relative to %s", path, base)
		}
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", path)
	}
	if fi.Size() > model.MaxResourceSize {
		return "", fmt.Errorf("file %s is %d bytes, more than the %d a resource may be", path, fi.Size(), model.MaxResourceSize)
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, model.MaxResourceSize+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	if n > model.MaxResourceSize {
		return "", fmt.Errorf("file %s grew past the %d bytes a resource may be while it was read", path, model.MaxResourceSize)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
