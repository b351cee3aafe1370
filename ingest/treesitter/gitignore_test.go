package treesitter

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memctl/memctl/ingest"
)

// The walk keeps exactly the files git does not ignore: git itself is the
// expectation.
func TestGitignoreMatchesGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".gitignore", strings.Join([]string{
		"# comment",
		"*.gen.py",
		"!keep.gen.py",
		"/rootonly.py",
		"logs/",
		"docs/**/draft_*.py",
		"**/cache/*.py",
		"a?c.py",
		"[xy]z.py",
		"sub/deep/",
		"trailing.py   ",
		"\\#hash.py",
		"out/**",
		"!out/",
	}, "\n")+"\n")
	write("sub/.gitignore", "local.py\n/anchored.py\n!important.gen.py\n")
	files := []string{
		"main.py", "x.gen.py", "keep.gen.py", "rootonly.py", "sub/rootonly.py", "logs/a.py", "sub/logs/b.py",
		"docs/draft_1.py", "docs/a/b/draft_2.py", "docs/a/final.py", "cache/c.py", "p/cache/d.py", "p/cache/e/f.py",
		"abc.py", "abbc.py", "xz.py", "zz.py", "sub/deep/g.py", "sub/deeper/h.py", "trailing.py", "#hash.py",
		"out/o.py", "out/in/p.py", "sub/local.py", "sub/q/local.py", "sub/anchored.py", "sub/q/anchored.py",
		"sub/important.gen.py", "other/important.gen.py",
	}
	for _, f := range files {
		write(f, "x = 1\n")
	}
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return string(out)
	}
	git("init", "-q")
	var want []string
	for _, l := range strings.Split(git("ls-files", "--others", "--exclude-standard"), "\n") {
		if strings.HasSuffix(l, ".py") {
			want = append(want, strings.Trim(l, `"`))
		}
	}
	slices.Sort(want)
	w, err := walk(root, []string{ingest.LangPython}, ingest.WalkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range w.Files {
		got = append(got, f.Rel)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("walk kept\n%q\ngit keeps\n%q", got, want)
	}
	// Walking a subdirectory applies the ignore files above it too.
	w, err = walk(filepath.Join(root, "sub"), []string{ingest.LangPython}, ingest.WalkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, f := range w.Files {
		got = append(got, "sub/"+f.Rel)
	}
	var wantSub []string
	for _, f := range want {
		if strings.HasPrefix(f, "sub/") {
			wantSub = append(wantSub, f)
		}
	}
	if !slices.Equal(got, wantSub) {
		t.Errorf("walk of sub/ kept\n%q\ngit keeps\n%q", got, wantSub)
	}
}
