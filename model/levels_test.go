package model

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"strconv"
	"strings"
	"testing"
)

// TestLevelTableCoversEveryOp reads the Op constants from the source, so
// that a new command without a row of the level table fails here rather
// than being proposed to nodes that cannot apply it.
func TestLevelTableCoversEveryOp(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ops []Op
	for _, f := range pkgs["model"].Files {
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok || vs.Type == nil {
				return true
			}
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Op" {
				return true
			}
			for _, v := range vs.Values {
				if lit, ok := v.(*ast.BasicLit); ok {
					s, _ := strconv.Unquote(lit.Value)
					ops = append(ops, Op(s))
				}
			}
			return true
		})
	}
	if len(ops) < 15 {
		t.Fatalf("found %d Op constants in the source; the scan is broken", len(ops))
	}
	for _, op := range ops {
		lvl, ok := (&Command{Op: op}).Level()
		if !ok {
			t.Errorf("op %s has no row in the level table (model/levels.go)", op)
			continue
		}
		if lvl < LevelBase || lvl > BuildLevel {
			t.Errorf("op %s needs level %d, outside %d..%d", op, lvl, LevelBase, BuildLevel)
		}
	}
	if _, ok := (&Command{Op: "no-such-op"}).Level(); ok {
		t.Error("an unknown op has a level")
	}
}

// TestLevelTableRows checks the table's own invariants: no duplicate row,
// every level within this build's, and BuildLevel the highest row.
func TestLevelTableRows(t *testing.T) {
	seen := map[string]bool{}
	top := Level(0)
	for _, f := range Features() {
		key := f.Kind + "." + f.Field
		if seen[key] {
			t.Errorf("row %s appears twice", key)
		}
		seen[key] = true
		if f.Level < LevelBase || f.What == "" {
			t.Errorf("row %s: level %d, what %q", key, f.Level, f.What)
		}
		if f.Field != "" && f.set == nil {
			t.Errorf("field row %s cannot tell whether a command carries the field", key)
		}
		top = max(top, f.Level)
	}
	if top != BuildLevel {
		t.Errorf("the highest row is level %d, BuildLevel is %d", top, BuildLevel)
	}
	for _, k := range []string{KindRegister, KindForget, KindReplace, KindClusterLevel, KindLeveled} {
		if _, ok := KindLevel(k); !ok {
			t.Errorf("raftstore kind %s has no row", k)
		}
	}
}

func TestClusterLevelAssess(t *testing.T) {
	cases := []struct {
		name  string
		c     ClusterLevel
		mixed bool
		warn  []string // substrings, one per expected warning
	}{
		{"uniform", ClusterLevel{Level: 2, Nodes: []NodeLevel{{ID: "n1", Level: 2}, {ID: "n2", Level: 2}}}, false, nil},
		{"rolling", ClusterLevel{Level: 1, Nodes: []NodeLevel{{ID: "n1", Level: 2}, {ID: "n2", Level: 1}, {ID: "n3", Level: 1}}}, true,
			[]string{"mixed cluster: n2 (level 1), n3 (level 1) still run an older build"}},
		{"ready to raise", ClusterLevel{Level: 1, Nodes: []NodeLevel{{ID: "n1", Level: 2}, {ID: "n2", Level: 2}}}, false,
			[]string{"every server runs feature level 2 but the cluster's level is 1: run fixpoint cluster upgrade"}},
		{"silent node", ClusterLevel{Level: 1, Nodes: []NodeLevel{{ID: "n1", Level: 2}, {ID: "n2"}}}, false,
			[]string{"node n2 did not say its feature level"}},
		{"rolled back too late", ClusterLevel{Level: 2, Nodes: []NodeLevel{{ID: "n1", Level: 2}, {ID: "n2", Level: 1}}}, true,
			[]string{"node n2 runs feature level 1, below the cluster's 2", "mixed cluster"}},
		{"halted", ClusterLevel{Level: 2, Nodes: []NodeLevel{{ID: "n1", Level: 2, Halted: "entry 9 needs level 3"}}}, false,
			[]string{"node n1 stopped applying the log: entry 9 needs level 3"}},
		{"memory pressure", ClusterLevel{Level: 2, Nodes: []NodeLevel{{ID: "n1", Level: 2}, {ID: "n2", Level: 2, Memory: "under memory pressure: 3.7 GiB in use of its 4.0 GiB limit"}}}, false,
			[]string{"node n2 is under memory pressure: 3.7 GiB in use of its 4.0 GiB limit: give it more memory (--memory-limit"}},
	}
	for _, tc := range cases {
		tc.c.Assess()
		if tc.c.Mixed != tc.mixed {
			t.Errorf("%s: mixed %v, want %v", tc.name, tc.c.Mixed, tc.mixed)
		}
		if len(tc.c.Warnings) != len(tc.warn) {
			t.Errorf("%s: warnings %q, want %d", tc.name, tc.c.Warnings, len(tc.warn))
			continue
		}
		for i, w := range tc.warn {
			if !strings.Contains(tc.c.Warnings[i], w) {
				t.Errorf("%s: warning %d is %q, want it to contain %q", tc.name, i, tc.c.Warnings[i], w)
			}
		}
	}
}

// TestFieldRowsRaiseTheLevel: a command carrying a field of this release
// needs its level, and the same command without it the base level, so a
// mixed cluster refuses only what an older build would misread.
func TestFieldRowsRaiseTheLevel(t *testing.T) {
	for _, tc := range []struct {
		name string
		cmd  *Command
		want Level
	}{
		{"register", &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "m1"}}, LevelBase},
		{"register numbered", &Command{Op: OpMachine, Machine: &RegisterMachine{Name: "m1", Number: true}}, LevelRecorded},
		{"deploy", &Command{Op: OpDeploy, Deploy: &Deploy{Env: Environment{Services: map[string]ServiceSpec{"db": {}}}}}, LevelBase},
		{"deploy trusted", &Command{Op: OpDeploy, Deploy: &Deploy{Env: Environment{Services: map[string]ServiceSpec{"db": {Trust: true}}}}}, LevelRecorded},
		{"deploy credential", &Command{Op: OpDeploy, Deploy: &Deploy{Env: Environment{Credential: &CredentialSpec{}}}}, LevelRecorded},
		{"results", &Command{Op: OpResults, Results: []Result{{Unit: "db/0", Ports: []string{"80/tcp"}}}}, LevelBase},
		{"results scoped port", &Command{Op: OpResults, Results: []Result{{Unit: "db/0"}, {Unit: "db/1", Ports: []string{"80/tcp@db"}}}}, LevelRecorded},
		{"results reboot", &Command{Op: OpResults, Results: []Result{{Unit: "db/0", Reboot: true}}}, LevelRecorded},
		{"results boot seen", &Command{Op: OpResults, Results: []Result{{Unit: "db/0", Seen: &Seen{Boot: 1}}}}, LevelRecorded},
		{"finish scoped port", &Command{Op: OpFinish, Finish: &FinishAction{ID: 1, Writes: &Result{Unit: "db/0", Ports: []string{"80/tcp@db"}}}}, LevelRecorded},
		{"finish", &Command{Op: OpFinish, Finish: &FinishAction{ID: 1, Writes: &Result{Unit: "db/0"}}}, LevelBase},
	} {
		if got, ok := tc.cmd.Level(); !ok || got != tc.want {
			t.Errorf("%s: level %d (known %v); want %d", tc.name, got, ok, tc.want)
		}
	}
}
