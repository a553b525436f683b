package model

import (
	"strings"
	"testing"
	"time"
)

// TestModelConfigUpdateStatus: update-status-hook-interval declared in
// the document is checked, planned as a model-config change, replicated
// in the state and kept in a document made from it; taking it out puts
// the server's interval back.
func TestModelConfigUpdateStatus(t *testing.T) {
	s := NewState()
	e := env(nil)
	e.ModelConfig = map[string]string{ModelConfigUpdateStatus: "1m"}
	cmd := &Command{Op: OpDeploy, Deploy: &Deploy{Env: *e, Charms: charms()}}
	if lvl, _ := cmd.Level(); lvl != LevelRecorded {
		t.Fatalf("a deploy with model_config needs level %d, want %d", lvl, LevelRecorded)
	}
	resp := apply(t, s, 1, cmd)
	if s.UpdateStatus != int64(time.Minute) || !strings.Contains(kinds(resp.Changes), "~ model-config update-status-hook-interval (default) -> 1m0s") {
		t.Fatalf("update status %d, changes:\n%s", s.UpdateStatus, kinds(resp.Changes))
	}
	if doc, _ := s.SynthesizeDocument(); doc.ModelConfig[ModelConfigUpdateStatus] != "1m0s" {
		t.Errorf("synthesized model config %v", doc.ModelConfig)
	}
	e.ModelConfig = nil
	apply(t, s, 2, &Command{Op: OpDeploy, Deploy: &Deploy{Env: *e, Charms: charms()}})
	if s.UpdateStatus != 0 {
		t.Errorf("removed: update status %d", s.UpdateStatus)
	}
	for v, want := range map[string]string{"1s": "from 10s to 1h0m0s", "soon": "give a duration", "": "give a duration"} {
		e.ModelConfig = map[string]string{ModelConfigUpdateStatus: v}
		if _, err := Resolve(e, charms()); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("update-status-hook-interval %q: %v", v, err)
		}
	}
	e.ModelConfig = map[string]string{"logging-config": "x"}
	if _, err := Resolve(e, charms()); err == nil || !strings.Contains(err.Error(), "model_config.logging-config: fixpoint takes no model-config key") {
		t.Errorf("unknown key: %v", err)
	}
}
