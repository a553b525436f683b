package charm

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/schemas"
)

var update = flag.Bool("update", false, "rewrite testdata/broken/*/want.txt from what vet reports")

// brokenDir holds the deliberately broken environments and charms, one
// directory each, with the report vet must give in want.txt.
const brokenDir = "../../testdata/broken"

// position matches the file:line:col (or file:line for YAML syntax
// errors) that starts every reported line.
var position = regexp.MustCompile(`^[^: ]+\.(cue|yaml):\d+(:\d+)?: `)

// TestBrokenEnvironments runs the vet check on every case from inside its
// directory, so that reported paths are short and stable, and compares
// the report with want.txt. Run with -update to rewrite the goldens after
// a deliberate change in wording, and review the diff.
func TestBrokenEnvironments(t *testing.T) {
	root, err := filepath.Abs(brokenDir)
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if !e.IsDir() || e.Name() == "charms" {
			continue
		}
		n++
		dir := filepath.Join(root, e.Name())
		t.Run(e.Name(), func(t *testing.T) {
			t.Chdir(dir)
			_, err := Check("env.cue")
			if err == nil {
				t.Fatal("vet found nothing wrong")
			}
			var se *schemas.Error
			if !errors.As(err, &se) {
				t.Fatalf("error is %T, want *schemas.Error: %v", err, err)
			}
			got := err.Error() + "\n"
			for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
				if !position.MatchString(line) {
					t.Errorf("line lacks a file:line:col position: %s", line)
				}
				if strings.Contains(line, root) {
					t.Errorf("line holds an absolute path: %s", line)
				}
			}
			golden := filepath.Join(dir, "want.txt")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestBrokenEnvironments -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("vet reports\n%s\nwant.txt says\n%s", got, want)
			}
		})
	}
	if n < 30 {
		t.Errorf("only %d broken cases; keep at least 30", n)
	}
}
