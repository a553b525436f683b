package charm

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint/fixpoint/schemas"
)

// repoFixture is a charm repository holding both forms — pg.charm (a
// charmcraft archive) and web/ (a directory) — and an environment
// directory beside it.
type repoFixture struct {
	repo, envDir, cache string
}

func newRepoFixture(t *testing.T) repoFixture {
	t.Helper()
	root := t.TempDir()
	f := repoFixture{repo: filepath.Join(root, "repo"), envDir: filepath.Join(root, "env"), cache: filepath.Join(root, "cache")}
	for _, d := range []string{filepath.Join(f.repo, "web"), f.envDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, f.repo, "pg.charm", buildZip(t, charmcraftEntries("pg")))
	writeFile(t, filepath.Join(f.repo, "web"), "metadata.yaml", []byte("name: web\nrequires:\n  db:\n    interface: pgsql\n"))
	// Extractions of vet land in the user's cache: keep them in the test's.
	t.Setenv("XDG_CACHE_HOME", filepath.Join(root, "usercache"))
	t.Setenv(RepositoryEnv, "")
	return f
}

// env writes an environment file and returns its path.
func (f repoFixture) env(t *testing.T, body string) string {
	t.Helper()
	return writeFile(t, f.envDir, "env.cue", []byte("apiVersion: \"fixpoint/v1\"\nname: \"shop\"\n"+body))
}

const repoEnv = `services: {
	db: {charm: "pg"}
	web: {charm: "web", units: 2}
}
relations: "web-db": ["web:db", "db:db"]
`

func TestRepositoryHoldsBothForms(t *testing.T) {
	f := newRepoFixture(t)
	env := f.env(t, repoEnv)
	c, err := CheckWith(Options{CacheDir: f.cache, Repository: f.repo}, env)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Dirs["web"]; got != filepath.Join(f.repo, "web") {
		t.Errorf("web's charm is %s", got)
	}
	if got := c.Dirs["db"]; filepath.Dir(got) != filepath.Join(f.cache, extractedDir) {
		t.Errorf("db's charm is %s, want it extracted into the cache", got)
	}
	for _, svc := range []string{"db", "web"} {
		spec := c.Env.Env.Services[svc]
		ch := c.Charms[spec.CharmHash]
		if ch == nil || ch.Source != svc && ch.Source != "pg" || len(spec.CharmHash) != 64 {
			t.Errorf("%s: hash %q charm %+v", svc, spec.CharmHash, ch)
		}
	}
	if c.Charms[c.Env.Env.Services["db"].CharmHash].Source != "pg" {
		t.Errorf("db's charm is not recorded as written")
	}
	if c.Desired.Services["web"].Units != 2 || len(c.Desired.Relations) != 1 {
		t.Errorf("desired %+v", c.Desired)
	}

	// The environment variable names the repository when no option
	// does, and the option wins over it.
	t.Setenv(RepositoryEnv, f.repo)
	if _, err := Check(env); err != nil {
		t.Fatalf("with $%s: %v", RepositoryEnv, err)
	}
	t.Setenv(RepositoryEnv, t.TempDir())
	if _, err := CheckWith(Options{Repository: f.repo}, env); err != nil {
		t.Fatalf("--repository over $%s: %v", RepositoryEnv, err)
	}
}

// problems returns the problems of a failed check.
func problems(t *testing.T, err error) []string {
	t.Helper()
	var se *schemas.Error
	if !errors.As(err, &se) {
		t.Fatalf("want problems, got %v", err)
	}
	var out []string
	for _, p := range se.Problems {
		out = append(out, p.String())
	}
	return out
}

func TestCharmReferenceErrors(t *testing.T) {
	f := newRepoFixture(t)
	for _, c := range []struct {
		name, repo, charm string
		want              []string
	}{
		{"no repository", "", "pg", []string{`env.cue:5:2:`, `charm "pg" is not a directory beside the environment file and no charm repository is set: set $FIXPOINT_CHARM_REPO or pass --repository DIR holding pg.charm or pg/`}},
		{"not in it", f.repo, "wbe", []string{`env.cue:5:2:`, `holds neither wbe.charm nor wbe/`, `did you mean "web"?`}},
		{"listed", f.repo, "postgresql", []string{`holds neither postgresql.charm nor postgresql/; it holds pg, web`}},
		{"repository missing", filepath.Join(f.repo, "nope"), "pg", []string{`the charm repository`, `is not a directory`}},
		{"archive missing", f.repo, "./pq.charm", []string{`charm archive "./pq.charm" does not exist`}},
		{"directory missing", f.repo, "./charms/pg", []string{`charm directory "./charms/pg" does not exist`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := f.env(t, "services: db: {\n\tunits: 1\n\tcharm: \""+c.charm+"\"\n}\n")
			_, err := CheckWith(Options{Repository: c.repo}, env)
			ps := problems(t, err)
			if len(ps) != 1 {
				t.Fatalf("problems %q", ps)
			}
			for _, w := range c.want {
				if !strings.Contains(ps[0], w) {
					t.Errorf("%s\nwant %q in it", ps[0], w)
				}
			}
		})
	}
}

func TestCharmReferenceForms(t *testing.T) {
	f := newRepoFixture(t)
	// A charm directory beside the environment named like a repository
	// charm is that directory: a reference keeps the meaning it had.
	local := filepath.Join(f.envDir, "web")
	if err := os.MkdirAll(local, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, local, "metadata.yaml", []byte("name: localweb\n"))
	env := f.env(t, `services: web: charm: "web"`)
	c, err := CheckWith(Options{Repository: f.repo}, env)
	if err != nil {
		t.Fatal(err)
	}
	if c.Dirs["web"] != local || c.Desired.Services["web"].CharmName != "localweb" {
		t.Errorf("web's charm is %s (%s)", c.Dirs["web"], c.Desired.Services["web"].CharmName)
	}

	// An archive by path, relative to the environment file; vet extracts
	// it into the user's cache, content-addressed.
	writeFile(t, f.envDir, "pg_ubuntu-22.04-amd64.charm", buildZip(t, charmcraftEntries("pg")))
	c, err = Check(f.env(t, `services: db: charm: "./pg_ubuntu-22.04-amd64.charm"`))
	if err != nil {
		t.Fatal(err)
	}
	user, _ := DefaultCacheDir()
	if !strings.HasPrefix(c.Dirs["db"], filepath.Join(user, extractedDir)) || c.Metas[c.Dirs["db"]].Name != "pg" {
		t.Errorf("db's charm is %s", c.Dirs["db"])
	}

	// Both forms of one name in the repository: which is meant is not
	// guessed.
	if err := os.MkdirAll(filepath.Join(f.repo, "pg"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = CheckWith(Options{Repository: f.repo}, f.env(t, `services: db: charm: "pg"`))
	if ps := problems(t, err); len(ps) != 1 || !strings.Contains(ps[0], `charm "pg" is both pg.charm and pg/ in the charm repository`) {
		t.Errorf("problems %q", ps)
	}

	// An archive that escapes is reported at the service's charm field.
	writeFile(t, f.envDir, "evil.charm", buildZip(t, []testZipEntry{{name: "../x", body: "x"}}))
	_, err = Check(f.env(t, `services: db: charm: "./evil.charm"`))
	if ps := problems(t, err); len(ps) != 1 || !strings.Contains(ps[0], "env.cue:3:") || !strings.Contains(ps[0], "outside the charm directory") {
		t.Errorf("problems %q", ps)
	}
}

// TestArchiveWithoutAUserCache: with no user cache directory, vet
// extracts into a temporary directory and removes it before returning.
func TestArchiveWithoutAUserCache(t *testing.T) {
	f := newRepoFixture(t)
	tmp := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
	t.Setenv("TMPDIR", tmp)
	if _, err := DefaultCacheDir(); err == nil {
		t.Skip("the user cache directory is still known")
	}
	c, err := CheckWith(Options{Repository: f.repo}, f.env(t, `services: db: charm: "pg"`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Desired.Services["db"].CharmName != "pg" {
		t.Errorf("db runs %q", c.Desired.Services["db"].CharmName)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("left in the temporary directory: %v", ents)
	}
}
