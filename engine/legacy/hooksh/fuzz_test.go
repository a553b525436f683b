package hooksh

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad: whatever a charm's hook holds, Load answers (a file to run or
// a reason for the system shell) without panicking, and never both.
func FuzzLoad(f *testing.F) {
	for _, s := range []string{
		"#!/bin/sh\nset -e\nx=$(relation-get -r db:1 - db/0)\n",
		"#!/bin/sh -e\nf() { umask 077; }\nx=$(f) | cat &\n",
		"#!/bin/sh\n. \"$D/x.sh\"\ntrap 'rm -f $t' EXIT INT\nset -o vi\n",
		"#!/usr/bin/env sh\necho ${x:-$(echo \"$(echo a)\")}\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		dir := t.TempDir()
		p := filepath.Join(dir, "hook")
		if err := os.WriteFile(p, []byte(src), 0o700); err != nil {
			t.Fatal(err)
		}
		file, _, reason := Load(p, []string{"D=" + dir})
		if (file == nil) == (reason == "") {
			t.Fatalf("Load = %v, %q: want a file or a reason", file, reason)
		}
	})
}
