package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/urfave/cli/v2"
)

func initCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "init",
		Usage: "create a new, empty store at --db (the only command that creates one)",
		Description: "Inside a git work tree, the store directory is also added to the\n" +
			"repository's .git/info/exclude (once), so it is never committed.",
		Run: runInit,
	})
}

type initJSON struct {
	Path string `json:"path"`
	// GitExclude is the line added to .git/info/exclude ("" and left out
	// when none was).
	GitExclude string `json:"git_exclude,omitempty"`
}

func runInit(k *call) error {
	path := k.dbPath()
	opts, err := k.options(false)
	if err != nil {
		return err
	}
	s, err := lmdbstore.Init(path, opts)
	if err != nil {
		return err // the store's errors name the path
	}
	k.store = s
	// The store exists now: a failure to exclude it is a warning.
	line, exclude, err := excludeFromGit(path)
	if err != nil {
		fmt.Fprintf(k.env.Stderr, "memctl: warning: could not add the store to %s: %v\n", orDash(exclude), unwrapPathError(err))
		line = ""
	}
	if k.out.json {
		return k.out.record(initJSON{Path: path, GitExclude: line})
	}
	if err := k.out.textf("initialized empty store at %s\n", path); err != nil {
		return err
	}
	if line != "" {
		return k.out.textf("added %s to %s\n", line, exclude)
	}
	return nil
}

// excludeFromGit adds the store directory to the info/exclude file of the
// git work tree that contains it, as an anchored pattern ("/.memctl/"),
// unless a line there already names it. It returns the line added ("" for
// none) and the exclude file. A store outside any work tree, or inside the
// .git directory, is left alone.
func excludeFromGit(store string) (line, exclude string, err error) {
	abs, err := filepath.Abs(store)
	if err != nil {
		return "", "", err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	top, gitDir, ok := findWorkTree(filepath.Dir(abs))
	if !ok {
		return "", "", nil
	}
	rel, err := filepath.Rel(top, abs)
	if err != nil || rel == "." || rel == ".git" || strings.HasPrefix(rel, ".git"+string(filepath.Separator)) || strings.HasPrefix(rel, "..") {
		return "", "", nil
	}
	pattern := "/" + filepath.ToSlash(rel) + "/"
	exclude = filepath.Join(commonGitDir(gitDir), "info", "exclude")
	old, err := os.ReadFile(exclude)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", exclude, err
	}
	sc := bufio.NewScanner(bytes.NewReader(old))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if strings.TrimSuffix(strings.TrimPrefix(l, "/"), "/") == filepath.ToSlash(rel) {
			return "", exclude, nil // there already
		}
	}
	if err := os.MkdirAll(filepath.Dir(exclude), 0o755); err != nil {
		return "", exclude, err
	}
	f, err := os.OpenFile(exclude, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return "", exclude, err
	}
	add := pattern + "\n"
	if len(old) > 0 && old[len(old)-1] != '\n' {
		add = "\n" + add
	}
	if _, err := f.WriteString(add); err != nil {
		f.Close()
		return "", exclude, err
	}
	return pattern, exclude, f.Close()
}

// findWorkTree walks up from dir to the nearest directory holding .git (a
// directory, or a file "gitdir: PATH" in linked work trees and
// submodules) and returns it with the git directory.
func findWorkTree(dir string) (top, gitDir string, ok bool) {
	for {
		p := filepath.Join(dir, ".git")
		if fi, err := os.Stat(p); err == nil {
			if fi.IsDir() {
				return dir, p, true
			}
			if b, err := os.ReadFile(p); err == nil {
				if g, found := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:"); found {
					g = strings.TrimSpace(g)
					if !filepath.IsAbs(g) {
						g = filepath.Join(dir, g)
					}
					return dir, g, true
				}
			}
			return "", "", false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", "", false
		}
		dir = parent
	}
}

// commonGitDir is the directory holding info/exclude: a linked work tree's
// git directory names it in its commondir file.
func commonGitDir(gitDir string) string {
	b, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	if err != nil {
		return gitDir
	}
	c := strings.TrimSpace(string(b))
	if !filepath.IsAbs(c) {
		c = filepath.Join(gitDir, c)
	}
	return filepath.Clean(c)
}
