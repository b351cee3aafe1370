package eval

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/ingest/treesitter"
)

// ErrNotGitRepo: DIR is not inside a git work tree (or git is missing).
var ErrNotGitRepo = errors.New("not a git work tree")

// ErrNoCommits: the history has no commit the evaluation can use.
var ErrNoCommits = errors.New("no qualifying commit")

// Repo is the git repository an evaluation reads: Top is its work tree's
// root, Prefix the evaluated directory relative to Top ("" for the root).
type Repo struct {
	Top    string
	Prefix string
	Head   string // commit hash of HEAD when the evaluation started
}

// OpenRepo finds the git repository that holds dir.
func OpenRepo(dir string) (*Repo, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, fmt.Errorf("%w: git not found: %v", ErrNotGitRepo, err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	top, err := git(abs, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrNotGitRepo, dir)
	}
	prefix, err := git(abs, "rev-parse", "--show-prefix")
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrNotGitRepo, dir)
	}
	head, err := git(abs, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return nil, fmt.Errorf("%w: %s has no commits", ErrNoCommits, dir)
	}
	return &Repo{Top: strings.TrimSpace(top), Prefix: strings.TrimSuffix(strings.TrimSpace(prefix), "/"), Head: strings.TrimSpace(head)}, nil
}

// Commit is one commit an evaluation replays: its parent is where memory is
// built, Files are the source files it changed (paths relative to the
// evaluated directory, sorted), all of which exist in the parent.
type Commit struct {
	Hash    string
	Parent  string
	Subject string
	Files   []string
}

// CommitRule says which commits qualify: non-merge commits that change
// between MinFiles and MaxFiles source files, every one of them present in
// the parent (no file added or renamed into place). A source file is one
// of a language `ingest code` reads (Go, Python, TypeScript, JavaScript,
// Rust: treesitter.LangOf by its name) below no directory the walk skips
// (ingest.Walkable); other files do not count.
type CommitRule struct {
	MinFiles, MaxFiles int
	Walk               ingest.WalkOptions
}

// DefaultCommitRule is the rule of SPEC.md §11: 2 to 10 source files.
var DefaultCommitRule = CommitRule{MinFiles: 2, MaxFiles: 10}

// Commits returns the newest n qualifying commits after skipping the newest
// skip ones, oldest first (the order they are replayed in).
func (r *Repo) Commits(n, skip int, rule CommitRule) ([]Commit, error) {
	if n <= 0 {
		return nil, nil
	}
	args := []string{"-c", "core.quotePath=false", "log", "--no-merges", "--no-renames", "--name-status", "-z",
		"--relative", "--format=%x1e%H %P%x1f%s", r.Head, "--", "."}
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var found []Commit
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	sc.Split(ingest.SplitAt(0x1e))
	for sc.Scan() && len(found) < n+skip {
		if c, ok := parseCommit(sc.Text(), rule); ok {
			found = append(found, c)
		}
	}
	// Stop git early once enough commits were read.
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(found) <= skip {
		return nil, nil
	}
	found = found[skip:]
	// Newest first from git log; replay oldest first.
	for i, j := 0, len(found)-1; i < j; i, j = i+1, j-1 {
		found[i], found[j] = found[j], found[i]
	}
	return found, nil
}

// parseCommit reads one record of `git log --name-status -z` (header
// "hash parents\x1fsubject", then "\n" and status/path pairs separated by
// NUL) and applies the rule.
func parseCommit(rec string, rule CommitRule) (Commit, bool) {
	head, body, _ := strings.Cut(rec, "\n")
	ids, subject, _ := strings.Cut(head, "\x1f")
	hashes := strings.Fields(ids)
	if len(hashes) != 2 { // root commits have no parent; merges are excluded by git
		return Commit{}, false
	}
	c := Commit{Hash: hashes[0], Parent: hashes[1], Subject: subject}
	fields := strings.Split(body, "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		status := strings.TrimLeft(fields[i], "\n")
		file := fields[i+1]
		if treesitter.LangOf(file) == "" || !ingest.Walkable(file, rule.Walk) {
			continue
		}
		if status != "M" && status != "D" && status != "T" {
			return Commit{}, false // added (or copied) files did not exist in the parent
		}
		c.Files = append(c.Files, file)
	}
	if len(c.Files) < rule.MinFiles || len(c.Files) > rule.MaxFiles {
		return Commit{}, false
	}
	slices.Sort(c.Files)
	return c, true
}

// dir is the evaluated directory in the user's work tree.
func (r *Repo) dir() string { return filepath.Join(r.Top, filepath.FromSlash(r.Prefix)) }

// Dir is the evaluated directory inside a checkout rooted at top.
func (r *Repo) Dir(top string) string {
	if r.Prefix == "" {
		return top
	}
	return filepath.Join(top, filepath.FromSlash(path.Clean(r.Prefix)))
}

func git(dir string, args ...string) (string, error) {
	out, err := ingest.GitOutput(dir, args...)
	return string(out), err
}
