package api_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// TestResourceFilesAdmissionAndAccess: a deploy that names a resource
// file the control plane lacks is refused and the plan lists it; once
// uploaded (checked against its digest and the size cap) the deploy is
// taken. An agent fetches the file only while a unit of a service that
// uses it is on its machine; the operator fetches any.
func TestResourceFilesAdmissionAndAccess(t *testing.T) {
	n := startNode(t, "n1")
	op := api.NewClient([]string{n.addr}, operatorToken, nil)
	agents := map[string]*api.Client{}
	for i, m := range []string{"m1", "m2"} {
		agents[m] = api.NewClient([]string{n.addr}, joinToken, nil)
		if err := agents[m].Register(ctxT(t), m, "10.0.0."+string(rune('1'+i))); err != nil {
			t.Fatal(err)
		}
	}
	content := []byte("payload v1\n")
	sum := sha256.Sum256(content)
	digest := hex.EncodeToString(sum[:])
	file := filepath.Join(t.TempDir(), "payload.txt")
	if err := os.WriteFile(file, content, 0o644); err != nil {
		t.Fatal(err)
	}

	d := uploadedDeploy(t, n)(1)
	for h, c := range d.Charms {
		c.Meta.Resources = map[string]model.Resource{"payload": {Type: model.ResourceFile}}
		d.Charms[h] = c
	}
	spec := d.Env.Services["db"]
	spec.Placement = []string{"m1"}
	spec.Resources, spec.ResourceDigests = map[string]string{"payload": "./payload.txt"}, map[string]string{"payload": digest}
	d.Env.Services["db"] = spec

	plan, err := op.Plan(ctxT(t), d)
	if err != nil || len(plan.MissingResources) != 1 || plan.MissingResources[0] != digest {
		t.Fatalf("plan before the upload: %+v, %v; want the file missing", plan, err)
	}
	if _, err := op.Deploy(ctxT(t), d); err == nil || !strings.Contains(err.Error(), "resource "+digest+" is on no node") {
		t.Fatalf("deploy before the upload: %v", err)
	}
	// A wrong digest, or a file over the cap, is refused and not kept.
	if code, e, _ := call(t, http.MethodPut, n.addr+"/v1/resources/"+strings.Repeat("0", 64), operatorToken, content); code != http.StatusBadRequest || !strings.Contains(e.Message, "content hash is "+digest) {
		t.Errorf("upload under another digest: %d %v", code, e)
	}
	big := make([]byte, model.MaxResourceSize+1)
	bigSum := sha256.Sum256(big)
	if code, e, _ := call(t, http.MethodPut, n.addr+"/v1/resources/"+hex.EncodeToString(bigSum[:]), operatorToken, big); code != http.StatusBadRequest || !strings.Contains(e.Message, "larger than") {
		t.Errorf("upload over the cap: %d %v", code, e)
	}
	if err := agents["m1"].UploadResource(ctxT(t), digest, file); !errors.Is(err, api.ErrForbidden) {
		t.Errorf("an agent uploading a resource: %v, want forbidden", err)
	}
	if err := op.UploadResource(ctxT(t), digest, file); err != nil {
		t.Fatal(err)
	}
	if _, err := op.Deploy(ctxT(t), d); err != nil {
		t.Fatalf("deploy after the upload: %v", err)
	}
	rafttest.Eventually(t, time.Minute, "db/0 placed on m1", func() error {
		st, err := op.State(ctxT(t), false)
		if err != nil {
			return err
		}
		if u := st.Units["db/0"]; u == nil || u.Machine != "m1" {
			return errors.New("not yet")
		}
		return nil
	})

	dir := t.TempDir()
	if err := agents["m1"].FetchResource(ctxT(t), digest, filepath.Join(dir, "m1")); err != nil {
		t.Errorf("m1's agent, whose unit uses the file: %v", err)
	} else if got, _ := os.ReadFile(filepath.Join(dir, "m1")); string(got) != string(content) {
		t.Errorf("m1 fetched %q", got)
	}
	err = agents["m2"].FetchResource(ctxT(t), digest, filepath.Join(dir, "m2"))
	if !errors.Is(err, api.ErrForbidden) || !strings.Contains(err.Error(), "no unit on machine m2 uses it") {
		t.Errorf("m2's agent, with no unit using the file: %v, want forbidden", err)
	}
	if _, serr := os.Stat(filepath.Join(dir, "m2")); serr == nil {
		t.Error("a refused fetch left a file")
	}
	if err := op.FetchResource(ctxT(t), digest, filepath.Join(dir, "op")); err != nil {
		t.Errorf("the operator: %v", err)
	}
}
