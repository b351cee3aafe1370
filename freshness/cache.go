package freshness

// The refresh cache of a long-lived process (SPEC.md §9.10). The MCP
// server refreshes before every answer; between refreshes it keeps the
// codetree.Cache (the parse of every file by content, the graph last
// written: a one-file edit parses one file and compares only what
// changed; for Go, the listing and the type-checked packages: an edit
// re-checks the packages it affects) and the last `git status` it ran, with the files as they were
// then, which usually tells the git state of the next refresh without
// running git (gitMemo below).

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/ingest/codetree"
)

// Cache is what one process keeps between refreshes of one store. It is
// memory only: a process that starts fills it with its first refresh.
type Cache struct {
	code *codetree.Cache
	mu   sync.Mutex
	git  *gitMemo
	runs int // git status runs
}

// NewCache returns an empty refresh cache.
func NewCache() *Cache { return &Cache{code: codetree.NewCache()} }

// Deltas is the number of refreshes that compared with the store only what
// changed (codetree.Cache.Deltas).
func (c *Cache) Deltas() int { return c.code.Deltas() }

// GoExtractions is the number of Go extractions that re-checked only the
// packages a change affects (incremental) and that listed and checked the
// whole module (full), ingest.GoCache.
func (c *Cache) GoExtractions() (incremental, full int) { return c.code.GoExtractions() }

// GitRuns is the number of refreshes that ran `git status`.
func (c *Cache) GitRuns() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runs
}

// gitMemo is the last `git status` a refresh ran, and what it implies
// while HEAD stays at the same commit. It only ever concludes "dirty":
// that the tree is clean is git's to say.
//
//   - staged: a change was staged then; while the index file keeps its
//     stat, it still is.
//   - clean: the files git did not name (tracked, unchanged) with their
//     content hash then; one whose content differs now is a change.
//   - unstaged: tracked files changed but not staged then, with HEAD's
//     object; one whose bytes still hash to another object differs from
//     HEAD (not used when a clean filter or end-of-line conversion may
//     be configured: the bytes then need not be what git compares).
//   - untracked: untracked files an ingest reads; one still there is.
type gitMemo struct {
	key      string // dir and options
	commit   string
	staged   bool
	index    entry // stat of the git index file after the status
	clean    map[string]string
	unstaged map[string]string // path → HEAD's object name
	untrack  []string
}

// gitReader returns the GitState reader a refresh of abs hands to
// codetree: the memo's conclusion when it has one, else `git status`,
// remembered. entries are the files the refresh stat'ed when it started
// (at walked), now their content hashes.
func (c *Cache) gitReader(abs, key string, entries []entry, now map[string]string, walked time.Time) func(string) (ingest.GitState, bool, error) {
	return func(dir string) (ingest.GitState, bool, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		st, ok, ran, err := readGit(&c.git, abs, key, dir, entries, now, walked, nil)
		if ran {
			c.runs++
		}
		return st, ok, err
	}
}

// readGit is the git state of the tree at abs: what *memo proves, else
// git's status — the one ahead delivers when it is not nil, else read now
// — and then *memo is the memo of that status (nil when there is none).
// ran: git's status was used.
func readGit(memo **gitMemo, abs, key, dir string, entries []entry, now map[string]string, walked time.Time,
	ahead func() (ingest.GitStatus, bool, error)) (st ingest.GitState, ok, ran bool, err error) {
	if st, ok := (*memo).dirty(abs, key, now); ok {
		return st, true, false, nil
	}
	*memo = nil
	if ahead == nil {
		ahead = func() (ingest.GitStatus, bool, error) { return ingest.ReadGitStatus(dir) }
	}
	gs, ok, err := ahead()
	if err != nil || !ok {
		return gs.GitState, ok, true, err
	}
	*memo = newGitMemo(abs, key, gs, entries, now, walked)
	return gs.GitState, true, true, nil
}

// dirty reports a dirty tree at the memo's commit when the memo proves
// it (ok false: ask git).
func (m *gitMemo) dirty(abs, key string, now map[string]string) (ingest.GitState, bool) {
	if m == nil || m.key != key {
		return ingest.GitState{}, false
	}
	gitDir, commonDir := findGitDir(abs)
	if head, ok := readHead(gitDir, commonDir); !ok || head != m.commit {
		return ingest.GitState{}, false
	}
	yes := ingest.GitState{Commit: m.commit, Dirty: true}
	if m.staged {
		if fi, err := os.Lstat(filepath.Join(gitDir, "index")); err == nil && statOf(fi) == m.index {
			return yes, true
		}
	}
	for p, h := range m.clean {
		if now[p] != h {
			return yes, true
		}
	}
	for p, obj := range m.unstaged {
		b, err := os.ReadFile(filepath.Join(abs, filepath.FromSlash(p)))
		if err != nil || blobID(b, len(obj)) != obj {
			return yes, true
		}
	}
	for _, p := range m.untrack {
		if _, err := os.Lstat(filepath.Join(abs, filepath.FromSlash(p))); err == nil {
			return yes, true
		}
	}
	return ingest.GitState{}, false
}

// newGitMemo records what a status implies. A file whose stat changed
// since the refresh hashed it, or that was written so recently that a
// change in the same clock tick would not show in its stat, is left out
// of clean unless hashing it again finds the same content.
func newGitMemo(abs, key string, gs ingest.GitStatus, entries []entry, now map[string]string, walked time.Time) *gitMemo {
	m := &gitMemo{key: key, commit: gs.Commit, clean: make(map[string]string, len(entries)),
		unstaged: make(map[string]string)}
	gitDir, commonDir := findGitDir(abs)
	for _, e := range gs.Paths {
		if (e.Kind == '1' || e.Kind == '2' || e.Kind == 'u') && e.XY != "" && e.XY[0] != '.' {
			m.staged = true
		}
	}
	if fi, err := os.Lstat(filepath.Join(gitDir, "index")); err == nil {
		m.index = statOf(fi)
	} else {
		m.staged = false
	}
	filters := mayFilter(abs, gitDir, commonDir)
	for p, e := range gs.Paths {
		switch {
		case e.Kind == '?' && ingest.IngestedName(filepath.Base(p)):
			m.untrack = append(m.untrack, p)
		case e.Kind == '1' && e.XY != "" && e.XY[0] == '.' && e.Head == e.Index && !filters && strings.Trim(e.Head, "0") != "":
			m.unstaged[p] = e.Head
		}
	}
	recent := walked.Add(-2 * time.Second).UnixNano()
	var buf []byte
	for _, e := range entries {
		h, ok := now[e.Path]
		if e.Kind != kindFile || !ok {
			continue
		}
		if _, named := gs.Named(e.Path); named {
			continue
		}
		fi, err := os.Lstat(filepath.Join(abs, filepath.FromSlash(e.Path)))
		if err != nil || fi.Size() != e.Size || fi.ModTime().UnixNano() != e.MTime {
			continue
		}
		if e.MTime >= recent {
			if buf, err = readInto(buf, filepath.Join(abs, filepath.FromSlash(e.Path))); err != nil || hashOf(buf) != h {
				continue
			}
		}
		m.clean[e.Path] = h
	}
	return m
}

// mayFilter reports whether git may compare a file by other bytes than
// its own: a .gitattributes at the top of the work tree or in dir, the
// repository's info/attributes, or end-of-line or filter settings in the
// repository's or the user's configuration.
func mayFilter(abs, gitDir, commonDir string) bool {
	top := abs // the work tree's top: where .git is
	for d := abs; filepath.Dir(d) != d; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			top = d
			break
		}
	}
	for _, p := range []string{filepath.Join(top, ".gitattributes"), filepath.Join(abs, ".gitattributes"),
		filepath.Join(commonDir, "info", "attributes")} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	configs := []string{filepath.Join(commonDir, "config"), "/etc/gitconfig"}
	if home, err := os.UserHomeDir(); err == nil {
		configs = append(configs, filepath.Join(home, ".gitconfig"), filepath.Join(home, ".config", "git", "config"))
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		configs = append(configs, filepath.Join(x, "git", "config"))
	}
	for _, p := range configs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		c := strings.ToLower(string(b))
		if strings.Contains(c, "autocrlf") || strings.Contains(c, "eol") || strings.Contains(c, "filter") ||
			strings.Contains(c, "attributesfile") || strings.Contains(c, "include") {
			return true
		}
	}
	return false
}

// blobID is git's object name of a blob with content b, SHA-1 or (for a
// 64-digit name) SHA-256.
func blobID(b []byte, digits int) string {
	header := fmt.Sprintf("blob %d\x00", len(b))
	if digits == 64 {
		h := sha256.New()
		h.Write([]byte(header))
		h.Write(b)
		return hex.EncodeToString(h.Sum(nil))
	}
	h := sha1.New()
	h.Write([]byte(header))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

func statOf(fi os.FileInfo) entry {
	return entry{Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
}
