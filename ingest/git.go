package ingest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memctl/memctl/lmdbstore"
)

// ErrNotGitRepo: `ingest git` was pointed at a directory outside any git
// work tree, or git is not installed.
var ErrNotGitRepo = errors.New("not a git work tree")

// GitOptions configures ExtractGit.
type GitOptions struct {
	WalkOptions
	// MaxCommitFiles: commits changing more files than this (mass
	// renames, vendoring, reformatting) add no co_changed edges. They
	// still count as changes. 0 means DefaultMaxCommitFiles.
	MaxCommitFiles int
	Progress       func(Progress)
}

// DefaultMaxCommitFiles is the default GitOptions.MaxCommitFiles.
const DefaultMaxCommitFiles = 50

// GitResult is the history of a work tree as a graph: one file node per
// tracked file with at least one commit (payload: path and "git"), and
// co_changed edges between files changed by the same commit, weighted by
// the number of such commits (one edge per pair, from the smaller key).
type GitResult struct {
	Graph          *Graph
	Commits        int // commits read (merges excluded)
	SkippedCommits int // commits above MaxCommitFiles
	Files          int // tracked files in the tree
	// NoRenameCommits: commits read without rename detection because git
	// could not read the objects it compares (a partial clone, a clone
	// missing blobs), newest first. Their renamed files count as deleted
	// and added.
	NoRenameCommits []string
	Elapsed         time.Duration
}

// ExtractGit reads the history of the git work tree at root.
func ExtractGit(root string, opts GitOptions) (*GitResult, error) {
	start := time.Now()
	if opts.MaxCommitFiles <= 0 {
		opts.MaxCommitFiles = DefaultMaxCommitFiles
	}
	if opts.Progress != nil {
		opts.Progress(Progress{Phase: "reading"})
	}
	if _, err := exec.LookPath("git"); err != nil {
		return nil, fmt.Errorf("%w: git not found: %v", ErrNotGitRepo, err)
	}
	if out, err := GitOutput(root, "rev-parse", "--is-inside-work-tree"); err != nil || strings.TrimSpace(string(out)) != "true" {
		return nil, fmt.Errorf("%w: %s", ErrNotGitRepo, root)
	}
	// Tracked files, relative to root, that a walk would enter.
	ls, err := GitOutput(root, "ls-files", "-z", "--full-name", "--", ".")
	if err != nil {
		return nil, err
	}
	prefix, err := GitOutput(root, "rev-parse", "--show-prefix")
	if err != nil {
		return nil, err
	}
	pre := strings.TrimSpace(string(prefix))
	tracked := make(map[string]bool)
	for _, p := range strings.Split(string(ls), "\x00") {
		rel, ok := strings.CutPrefix(p, pre)
		if p == "" || !ok || !walkable(rel, opts.WalkOptions) {
			continue
		}
		tracked[rel] = true
	}

	res := &GitResult{Graph: NewGraph(), Files: len(tracked)}
	hist := make(map[string]*GitPayload)
	first := make(map[string]int64)
	last := make(map[string]int64)
	pairs := make(map[[2]string]int)
	noRenames, err := readHistory(root, func(c gitCommit) {
		res.Commits++
		var files []string
		for _, f := range c.files {
			if tracked[f] {
				files = append(files, f)
			}
		}
		for _, f := range files {
			h := hist[f]
			if h == nil {
				h = &GitPayload{}
				hist[f] = h
				first[f], last[f] = c.time, c.time
				h.LastCommit = c.hash
			}
			h.Changes++
			if c.time > last[f] {
				last[f] = c.time
				h.LastCommit = c.hash
			}
			first[f] = min(first[f], c.time)
		}
		if opts.Progress != nil && res.Commits%1000 == 0 {
			opts.Progress(Progress{Phase: "reading", Done: res.Commits})
		}
		if len(c.files) > opts.MaxCommitFiles {
			res.SkippedCommits++
			return
		}
		slices.Sort(files)
		files = slices.Compact(files)
		for i, a := range files {
			for _, b := range files[i+1:] {
				pairs[[2]string{a, b}]++
			}
		}
	})
	if err != nil {
		return nil, err
	}
	res.NoRenameCommits = noRenames
	for f, h := range hist {
		h.FirstChange = unixRFC3339(first[f])
		h.LastChange = unixRFC3339(last[f])
		res.Graph.AddNode(Node{Key: FileKey(f), Type: TypeFile, Payload: mustJSON(FilePayload{Path: f, Git: mustJSON(h)})})
	}
	for p, n := range pairs {
		res.Graph.AddEdge(Edge{Src: FileKey(p[0]), Rel: RelCoChanged, Dst: FileKey(p[1]), Weight: coChangeWeight(n)})
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// coChangeWeight maps a pair's commit count n to n/(n+1): it grows with the
// count but stays below 1, the engines' weight cap, so a pair changed together
// twenty times still outranks one changed once (1 → 0.5, 2 → 0.67, 9 → 0.9).
// The count is recoverable as w/(1-w).
func coChangeWeight(n int) float32 { return float32(n) / float32(n+1) }

// GitOutput runs git in dir and returns its stdout; a failure names the
// subcommand and git's first line of stderr.
func GitOutput(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", args[0], err, firstLine(stderr.String()))
	}
	return out, nil
}

// walkable reports whether a walk with opts would reach file rel.
func walkable(rel string, opts WalkOptions) bool {
	dir := path.Dir(rel)
	if dir == "." {
		return true
	}
	for _, elem := range strings.Split(dir, "/") {
		if skipDir(elem, opts) {
			return false
		}
	}
	return true
}

// SplitAt is a bufio.SplitFunc for records separated by sep (git log
// output with record separators; eval reads it too).
func SplitAt(sep byte) bufio.SplitFunc {
	return func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.IndexByte(data, sep); i >= 0 {
			return i + 1, data[:i], nil
		}
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	}
}

// ownedByGit reports whether `ingest git` owns a stored node: a file node
// `ingest go` did not write.
func ownedByGit(n lmdbstore.Node) bool {
	return strings.HasPrefix(n.Key, "file:") && !hasField(n.Payload, "hash")
}

// WriteGit makes the store's `ingest git` share equal to res, in one
// write transaction: the "git" field of file payloads (kept beside the
// fields `ingest go` wrote), file nodes for files only git knows, and
// every co_changed edge.
func WriteGit(s *lmdbstore.Store, res *GitResult, meta lmdbstore.WriteMeta, progress func(Progress)) (WriteStats, error) {
	var stats WriteStats
	c, err := s.Update(meta, func(tx *lmdbstore.WriteTxn) error {
		rels, err := ensureRelations(tx, []string{RelCoChanged})
		if err != nil {
			return err
		}
		st, err := readState(tx.Reader(), ownedByGit, rels, true)
		if err != nil {
			return err
		}
		// Files of `ingest go` that lost their history lose their "git"
		// field; the rest of their payload stays.
		want := NewGraph()
		for _, n := range res.Graph.Nodes() {
			want.AddNode(n)
		}
		for _, e := range res.Graph.Edges() {
			want.AddEdge(e)
		}
		for key, n := range st.others {
			if want.HasNode(key) {
				continue
			}
			var p FilePayload
			if json.Unmarshal(n.Payload, &p) == nil && len(p.Git) > 0 {
				p.Git = nil
				want.AddNode(Node{Key: key, Type: n.Type, Payload: mustJSON(p)})
			}
		}
		p, err := diff(tx.Reader(), want, st, rels, setGitField)
		if err != nil {
			return err
		}
		stats = WriteStats{NodesPut: len(p.putNodes), NodesDeleted: len(p.delNodes), EdgesPut: len(p.putEdges), EdgesDeleted: len(p.delEdges)}
		return apply(tx, p, progress)
	})
	stats.Commit = c
	return stats, err
}

// setGitField writes the wanted "git" field into the stored payload,
// keeping the fields `ingest go` owns.
func setGitField(want Node, stored lmdbstore.Node) Node {
	var p, w FilePayload
	if json.Unmarshal(stored.Payload, &p) != nil || json.Unmarshal(want.Payload, &w) != nil {
		return want
	}
	p.Git = w.Git
	if p.Path == "" {
		p.Path = w.Path
	}
	return Node{Key: want.Key, Type: stored.Type, Payload: mustJSON(p)}
}

func unixRFC3339(sec int64) string { return time.Unix(sec, 0).UTC().Format(time.RFC3339) }

// GitState is the commit a work tree is at and whether the files an
// ingest reads differ from it (SPEC.md §9.7).
type GitState struct {
	Commit string `json:"commit"`
	Dirty  bool   `json:"dirty"`
}

// ReadGitState returns the git state of the work tree holding dir; ok is
// false when dir is not inside a git work tree with a commit (or git is not
// installed). Dirty counts tracked files changed under dir (staged or
// not) and untracked files under dir that an ingest would read.
func ReadGitState(dir string) (st GitState, ok bool, err error) {
	gs, ok, err := readGitStatus(dir, false)
	return gs.GitState, ok, err
}

// GitStatus is a GitState with what `git status` said of each path it
// named under dir (slash paths relative to dir; ignored files included
// when asked). A file under dir it did not name was tracked and unchanged
// then, so a later change of its content makes the tree dirty, and a
// tracked file it named as changed but not staged stays dirty while its
// content differs from HEAD's object: a caller can tell both later
// without running git.
type GitStatus struct {
	GitState
	Paths map[string]StatusEntry
	// IgnoredDirs are the ignored directories named ("build/"): every
	// path below them counts as named.
	IgnoredDirs []string
}

// StatusEntry is one path of `git status --porcelain=v2`.
type StatusEntry struct {
	// Kind: '1' changed, '2' renamed or copied (also its origin), 'u'
	// unmerged, '?' untracked, '!' ignored.
	Kind byte
	// XY are the staged and unstaged status letters ("." unchanged).
	XY string
	// Head and Index are the object names of the file in HEAD and in the
	// index (changed entries).
	Head, Index string
}

// Named reports whether the status named rel (a slash path relative to
// dir) and how.
func (s *GitStatus) Named(rel string) (StatusEntry, bool) {
	if e, ok := s.Paths[rel]; ok {
		return e, true
	}
	for _, d := range s.IgnoredDirs {
		if strings.HasPrefix(rel, d) {
			return StatusEntry{Kind: '!'}, true
		}
	}
	return StatusEntry{}, false
}

// ReadGitStatus is ReadGitState with what git said of each path, ignored
// files included (the same two git processes).
func ReadGitStatus(dir string) (st GitStatus, ok bool, err error) {
	return readGitStatus(dir, true)
}

func readGitStatus(dir string, ignored bool) (st GitStatus, ok bool, err error) {
	if _, err := exec.LookPath("git"); err != nil {
		return st, false, nil
	}
	// --no-optional-locks: a refresh reads; it must not take the index
	// lock from the user's git nor rewrite the index.
	args := []string{"--no-optional-locks", "-c", "core.quotePath=false", "status", "--porcelain=v2", "-z", "--untracked-files=all"}
	if ignored {
		args = append(args, "--ignored=matching")
	}
	// The two git processes run at once (a refresh waits for both); the
	// status is used only when rev-parse found a commit.
	type output struct {
		out []byte
		err error
	}
	status := make(chan output, 1)
	go func() {
		out, err := GitOutput(dir, append(args, "--", ".")...)
		status <- output{out, err}
	}()
	head, err := GitOutput(dir, "rev-parse", "--show-prefix", "--verify", "-q", "HEAD")
	stat := <-status
	if err != nil {
		return st, false, nil // not a work tree, or no commit yet
	}
	prefix, commit, _ := strings.Cut(string(head), "\n")
	st.Commit = strings.TrimSpace(commit)
	out, err := stat.out, stat.err
	if err != nil {
		return st, false, err
	}
	st.Paths = make(map[string]StatusEntry)
	name := func(p string, e StatusEntry) {
		rel := strings.TrimPrefix(p, prefix) // git names paths from the top of the work tree
		if strings.HasSuffix(rel, "/") {
			st.IgnoredDirs = append(st.IgnoredDirs, rel)
		} else {
			st.Paths[rel] = e
		}
	}
	recs := strings.Split(string(out), "\x00")
	for i := 0; i < len(recs); i++ {
		rec := recs[i]
		if len(rec) < 3 {
			continue
		}
		e := StatusEntry{Kind: rec[0]}
		switch e.Kind {
		case '?', '!':
			name(rec[2:], e)
			if e.Kind == '?' && IngestedName(path.Base(rec[2:])) {
				st.Dirty = true
			}
			continue
		case '1', '2', 'u':
		default:
			st.Dirty = true // a record this reader does not know: say dirty
			continue
		}
		// "1 XY sub mH mI mW hH hI path", "2 … hH hI Xscore path\0orig",
		// "u XY sub m1 m2 m3 mW h1 h2 h3 path".
		n := map[byte]int{'1': 8, '2': 9, 'u': 10}[e.Kind]
		f := strings.SplitN(rec, " ", n+1)
		if len(f) != n+1 {
			st.Dirty = true
			continue
		}
		e.XY = f[1]
		if e.Kind != 'u' {
			e.Head, e.Index = f[6], f[7]
		}
		st.Dirty = true
		name(f[n], e)
		if e.Kind == '2' && i+1 < len(recs) {
			i++ // the path it was renamed or copied from
			name(recs[i], e)
		}
	}
	return st, true, nil
}

// IngestedName reports whether a file of that name is read by some ingest
// (SPEC.md §9.1): source files of every language and the files that change
// how they resolve.
func IngestedName(name string) bool {
	switch path.Ext(name) {
	case ".go", ".py", ".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs", ".rs":
		return true
	}
	switch name {
	case "go.mod", "go.sum", "go.work", "tsconfig.json", "jsconfig.json", "package.json", "Cargo.toml",
		".gitignore", "pyvenv.cfg":
		return true
	}
	return false
}

// GitRenames lists the files git sees renamed (similar content, git's -M
// default) between commit from and the work tree holding dir: old path →
// new path, both relative to dir. Untracked files take no part.
func GitRenames(dir, from string) (map[string]string, error) {
	out, err := GitOutput(dir, "-c", "core.quotePath=false", "diff", "--relative", "-M", "--name-status", "-z", from, "--", ".")
	if err != nil {
		return nil, err
	}
	fields := strings.Split(string(out), "\x00")
	renames := make(map[string]string)
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		switch {
		case strings.HasPrefix(f, "R") && i+2 < len(fields):
			renames[fields[i+1]] = fields[i+2]
			i += 2
		case strings.HasPrefix(f, "C") && i+2 < len(fields):
			i += 2
		case f != "" && i+1 < len(fields):
			i++
		}
	}
	return renames, nil
}

// GitDistance is the number of commits reachable from commit to and not
// from commit from, with ok false when from is not an ancestor of to (or
// either is unknown to the repository holding dir). 0 means the same
// commit.
func GitDistance(dir, from, to string) (n int, ok bool, err error) {
	if _, err := GitOutput(dir, "merge-base", "--is-ancestor", from, to); err != nil {
		return 0, false, nil
	}
	out, err := GitOutput(dir, "rev-list", "--count", from+".."+to)
	if err != nil {
		return 0, false, err
	}
	n, err = strconv.Atoi(strings.TrimSpace(string(out)))
	return n, err == nil, err
}
