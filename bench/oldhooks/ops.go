package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// packOps packs the ops test charms (testdata/ops/ops-db, ops-web) under
// tmp/ops the way charmcraft would and TestOpsCharmsEndToEnd does: the
// charm's files with the ops framework in venv/, where their dispatch
// puts it on PYTHONPATH. framework "" is shared/thirdparty/python-ops in
// a directory above the checkout.
func packOps(root, tmp, framework string) (string, error) {
	if framework == "" {
		framework = findOpsFramework(root)
		if framework == "" {
			return "", errors.New("ops flavour: Canonical's ops framework is not beside the checkout (shared/thirdparty/python-ops); pass -ops-framework or leave ops out of -flavours")
		}
	}
	if _, err := os.Stat(filepath.Join(framework, "ops", "__init__.py")); err != nil {
		return "", fmt.Errorf("ops flavour: %s holds no ops package: %v", framework, err)
	}
	if out, err := exec.Command("/usr/bin/python3", "-c", "import yaml, websocket").CombinedOutput(); err != nil {
		return "", fmt.Errorf("ops flavour: /usr/bin/python3 cannot import what ops needs (python3-yaml, python3-websocket): %v\n%s", err, out)
	}
	dir := filepath.Join(tmp, "ops")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for _, name := range []string{"ops-db", "ops-web"} {
		dst := filepath.Join(dir, name)
		for _, cp := range [][2]string{{filepath.Join(root, "testdata", "ops", name), dst}, {framework, filepath.Join(dst, "venv")}} {
			if out, err := exec.Command("cp", "-a", cp[0], cp[1]).CombinedOutput(); err != nil {
				return "", fmt.Errorf("ops flavour: cp %s: %v\n%s", cp[0], err, out)
			}
		}
	}
	return dir, nil
}

// findOpsFramework looks for shared/thirdparty/python-ops in the three
// directories above root.
func findOpsFramework(root string) string {
	dir := root
	for range 3 {
		dir = filepath.Dir(dir)
		fw := filepath.Join(dir, "shared", "thirdparty", "python-ops")
		if _, err := os.Stat(filepath.Join(fw, "ops", "__init__.py")); err == nil {
			return fw
		}
	}
	return ""
}
