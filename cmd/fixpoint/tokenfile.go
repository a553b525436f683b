package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// maxTokenFile bounds what a token file may hold; tokens are 48 hex digits.
const maxTokenFile = 4 << 10

// readTokenFile reads a token from path, as `--token-file` does: a token
// on the command line shows in ps and in shell history, one in a file only
// to its owner. A file that its group or others may read or write is
// refused: the token would not be secret.
func readTokenFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("--token-file %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("--token-file %s is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("--token-file %s has mode %04o: others than its owner can read or change the token; run `chmod 600 %s`", path, perm, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxTokenFile+1))
	if err != nil {
		return "", fmt.Errorf("--token-file %s: %w", path, err)
	}
	if len(b) > maxTokenFile {
		return "", fmt.Errorf("--token-file %s is larger than %d bytes: it should hold one token", path, maxTokenFile)
	}
	token := strings.TrimSpace(string(b))
	switch {
	case token == "":
		return "", fmt.Errorf("--token-file %s is empty", path)
	case strings.ContainsAny(token, " \t\r\n"):
		return "", fmt.Errorf("--token-file %s holds more than one word: it should hold one token", path)
	}
	return token, nil
}

// tokenFrom picks the token of --token, --token-file or $FIXPOINT_TOKEN,
// in that order; giving both flags is a mistake.
func tokenFrom(flag, file string) (string, error) {
	if flag != "" && file != "" {
		return "", errors.New("--token and --token-file exclude each other: use --token-file, which keeps the token out of ps")
	}
	if file != "" {
		return readTokenFile(file)
	}
	if flag != "" {
		fmt.Fprintln(os.Stderr, "warning: --token shows the token to every user of this machine in ps; use --token-file")
	}
	return firstNonEmpty(flag, os.Getenv("FIXPOINT_TOKEN")), nil
}

// createPrivate creates or truncates path readable by its owner only,
// for files that hold secrets (backups hold relation passwords); an
// existing file's wider mode is narrowed too.
func createPrivate(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
