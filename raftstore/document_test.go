package raftstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore/rafttest"
)

// feed applies raw entries to f from index at on, and returns what each
// answered.
func feed(f *fsm, at uint64, entries ...[]byte) []any {
	logs := make([]*raft.Log, len(entries))
	for i, e := range entries {
		logs[i] = &raft.Log{Type: raft.LogCommand, Index: at + uint64(i), Data: e}
	}
	return f.ApplyBatch(logs)
}

// proposed is cmd as the store puts it into the log.
func proposed(t *testing.T, cmd *model.Command) ([]byte, model.Level) {
	t.Helper()
	data, need, err := proposal(cmd)
	if err != nil {
		t.Fatal(err)
	}
	return data, need
}

// recordCmd is deployCmd asking for its document to be kept.
func recordCmd() *model.Command {
	c := deployCmd()
	c.Deploy.Record = true
	return c
}

// A build of the base level and one of this level apply the same log
// alike while the cluster is at the base level: neither keeps a document.
// A deploy that asks to keep one needs level 2: the old build stops at it
// rather than apply it otherwise. When the level rises, the new build
// makes the document from the state; a backup without one gets one too.
func TestDocumentAcrossLevels(t *testing.T) {
	old, cur := newFSM(testLogger(t)), newFSM(testLogger(t))
	old.build = model.LevelBase
	machine, _ := proposed(t, machineCmd("m1", "10.0.0.1"))
	deploy, need := proposed(t, deployCmd())
	if need != model.LevelBase {
		t.Fatalf("a deploy without the record flag needs level %d", need)
	}
	for _, f := range []*fsm{old, cur} {
		for i, out := range feed(f, 1, machine, deploy) {
			if err, ok := out.(error); ok {
				t.Fatalf("entry %d: %v", i+1, err)
			}
		}
	}
	a, _ := json.Marshal(old.state)
	b, _ := json.Marshal(cur.state)
	if string(a) != string(b) || old.state.Document != nil {
		t.Fatalf("the builds disagree at the base level:\n%s\n%s", a, b)
	}

	record, need := proposed(t, recordCmd())
	if need != model.LevelRecorded {
		t.Fatalf("a recorded deploy needs level %d, want %d", need, model.LevelRecorded)
	}
	var h *haltError
	if out := feed(old, 3, record); !errors.As(out[0].(error), &h) {
		t.Fatalf("the base build applied a recorded deploy: %v", out[0])
	}
	if after, _ := json.Marshal(old.state); string(after) != string(a) {
		t.Fatal("the base build changed its state at an entry it cannot apply")
	}

	raise, err := encodeEntry(entryClusterLevel, levelRecord{Level: model.LevelRecorded})
	if err != nil {
		t.Fatal(err)
	}
	if out := feed(cur, 3, leveled(model.LevelRecorded, raise)); out[0] != nil {
		t.Fatalf("raise: %v", out[0])
	}
	doc := cur.state.Document
	if doc == nil || doc.Name != "test" || doc.Services["db"].CharmHash != "h1" || *doc.Services["db"].Units != 1 {
		t.Fatalf("document made at the raise: %+v", doc)
	}
	// Deployed back against its revision, it changes nothing.
	back := &model.Command{Op: model.OpDeploy, Deploy: &model.Deploy{Env: *doc, Charms: deployCmd().Deploy.Charms, BaseIndex: cur.state.EnvIndex, Record: true}}
	data, _ := proposed(t, back)
	resp, ok := feed(cur, 4, data)[0].(*model.Response)
	if !ok || len(resp.Changes) != 0 {
		t.Fatalf("the document deployed back: %#v", resp)
	}

	// A backup of a base-level cluster restored at level 2.
	bare := model.NewState()
	if _, err := bare.Apply(1, deployCmd()); err != nil {
		t.Fatal(err)
	}
	backup, err := encodeEntry(entryReplace, document{Version: snapshotVersion, Index: 1, State: bare})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := feed(cur, 5, backup)[0].(*model.Response); !ok || cur.state.Document == nil || cur.state.Document.Services["db"].CharmHash != "h1" {
		t.Fatalf("restored backup's document: %+v", cur.state.Document)
	}
}

// A server of the base level keeps no document and refuses, before
// proposal, a deploy that asks to; started again on this build, alone,
// it raises its level and the environment it holds has its document.
func TestUpgradedServerExportsAtOnce(t *testing.T) {
	log := testLogger(t)
	ctx := ctxT(t, 2*time.Minute)
	n := newNode(t, log, "n1")
	n.level = model.LevelBase
	n.start(true, nil)
	settled(t, n)
	if _, err := n.s.Apply(ctx, deployCmd()); err != nil {
		t.Fatal(err)
	}
	before := n.s.LastIndex()
	_, err := n.s.Apply(ctx, recordCmd())
	var le *levelError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "this command needs 2") {
		t.Fatalf("recorded deploy on a base-level server: %v", err)
	}
	if got := n.s.LastIndex(); got != before {
		t.Fatalf("the refused deploy reached the log: %d, was %d", got, before)
	}
	_ = n.s.View(func(st *model.State) error {
		if st.Document != nil {
			t.Error("a base-level server keeps a document")
		}
		return nil
	})

	n.stop()
	n.level = model.BuildLevel
	n.start(false, nil)
	rafttest.Eventually(t, time.Minute, "the document made when the level rose", func() error {
		return n.s.View(func(st *model.State) error {
			if st.Document == nil || st.Document.Services["db"].CharmHash != "h1" {
				return fmt.Errorf("level %d, document %+v", n.s.fsm.clusterLevel(), st.Document)
			}
			return nil
		})
	})
}
