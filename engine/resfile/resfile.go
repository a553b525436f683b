// Package resfile reads a resource file the one way every reader does
// (vet and plan through engine/charm, the simulator): a regular file no
// larger than model.MaxResourceSize, known by its sha256.
package resfile

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"

	"github.com/fixpoint/fixpoint/model"
)

// Digest is the sha256 of a resource file, refused when it is not a
// regular file or is larger than model.MaxResourceSize. base names what a
// relative path was relative to, for the message of a missing file.
func Digest(path, base string) (string, error) {
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
