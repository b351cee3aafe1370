// Package freshness keeps a store's code graph equal to the tree it was
// ingested from without a manual step (SPEC.md §9.7–§9.10): Refresh finds
// what changed since the last ingest — by a stat of every file and
// directory the ingest reads against a stat file in the store directory,
// and git's HEAD — and re-ingests the difference through ingest/codetree
// in one revision; Stale lists the changed files without writing;
// Orphans and NearestLive find memory whose targets are gone; ResolveCommit
// maps a git commit to a revision.
//
// Invariants: an unchanged tree costs stats and reads only, never a
// write; a failed refresh leaves the store as it was (codetree writes one
// transaction or nothing); concurrent refreshes of one store write each
// change once (codetree re-checks the stored tree hashes inside its write
// transaction); the stat file and the refresh cache file are caches —
// damaged, missing or of another tree, they are rebuilt, never trusted.
package freshness

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/ingest/codetree"
	"github.com/memctl/memctl/ingest/treesitter"
	"github.com/memctl/memctl/lmdbstore"
)

// Options configures Refresh and Stale.
type Options struct {
	// Ingest is what a re-ingest runs with. Zero Langs means every
	// tree-sitter language; RecordGit is always set.
	Ingest codetree.Options
	// Disabled: never ingest; Refresh reports the stale files instead.
	Disabled bool
	// StatePath overrides the stat file (default: StateFile in the store
	// directory).
	StatePath string
	// Cache, kept by a long-lived process between refreshes of one store
	// (the MCP server), makes a refresh after a small edit parse only the
	// changed files, compare with the store only what changed and, most
	// often, tell the git state without running git (cache.go). Nil: a
	// refresh that finds a change reads the refresh cache file instead
	// (diskcache.go: the parses and the graph the last refresh of the
	// store left) and runs git.
	Cache *Cache
	// CachePath is the refresh cache file a refresh without Cache reads
	// and writes (diskcache.go; default: CacheFile beside the stat file,
	// NoCacheFile for none).
	CachePath string
	// cacheFileUsed, when set (tests), is called with the cache a refresh
	// read from the cache file, after its ingest.
	cacheFileUsed func(*codetree.Cache)
	// SaveLater saves the refresh cache file on its own goroutine, while
	// the caller answers; the Result's Wait waits for it. The one-shot
	// commands set it (RefreshTracked without a Cache).
	SaveLater bool
	// loadCache, when set (diskCache), waits for the cache file being
	// read and returns its cache, the same one at every call.
	loadCache func() *codetree.Cache
	// gitRuns, when set (tests), counts the git statuses a refresh
	// without a process cache used (oneShotGit).
	gitRuns *int
}

// Result says what a refresh did and what the store's code graph is as of.
type Result struct {
	// Refreshed: something differed (files or HEAD) and an ingest ran.
	Refreshed bool `json:"refreshed"`
	// Changed are the files (slash paths relative to the tree) whose
	// ingested content the refresh changed: added, edited or deleted.
	Changed []string `json:"changed"`
	// Rev is the revision the refresh wrote, 0 for none.
	Rev lmdbstore.Revision `json:"rev"`
	// AsOf is the store's latest revision after the refresh: the view an
	// answer reads.
	AsOf lmdbstore.Revision `json:"as_of"`
	// Commit and Dirty: the git state the code graph was ingested at
	// (empty outside git).
	Commit string `json:"commit,omitempty"`
	Dirty  bool   `json:"dirty,omitempty"`
	// Moves are the keys the ingest saw move (memory carried along).
	Moves []codetree.Move `json:"moves,omitempty"`
	// Stale lists the files changed since the last refresh when Refresh
	// was disabled or failed (then the store is as it was).
	Stale []string `json:"stale,omitempty"`
	// Summary is the ingest's own summary when one ran, Stats what it
	// wrote.
	Summary *codetree.Summary `json:"ingest,omitempty"`
	Stats   ingest.WriteStats `json:"-"`
	// saved waits for the refresh cache file's save when
	// Options.SaveLater left it to a goroutine (nil otherwise).
	saved func() struct{}
}

// Wait returns once what the refresh left running is done: the refresh
// cache file's save under Options.SaveLater. A process waits before it
// exits, or the next one-shot process finds the old file and refreshes
// without it.
func (r Result) Wait() {
	if r.saved != nil {
		r.saved()
	}
}

// Refresh brings the code graph of s up to date with dir. Nothing changed
// costs a stat per file and directory plus a read of git's HEAD; otherwise
// it re-ingests (codetree writes only the difference, in one revision) and
// rewrites the stat file. On failure the Result's Stale lists the changed
// files and the error is returned.
func Refresh(s *lmdbstore.Store, dir string, o Options) (Result, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Result{}, err
	}
	o = o.withDefaults(s)
	st, _ := readState(o.StatePath) // damaged or absent: rebuilt below
	if st != nil && st.Dir == abs && st.Config == o.config() {
		unchanged, changed, err := st.unchanged(s, abs)
		if err != nil {
			return Result{}, err
		}
		if changed != "" && !o.Disabled {
			// The first changed file found: its grammar compiles while the
			// refresh reads its cache file and walks the tree.
			treesitter.Warm([]string{changed})
		}
		if unchanged {
			var res Result
			err := s.View(func(r *lmdbstore.ReadTxn) error { res.AsOf = r.Revision(); return nil })
			res.Commit, res.Dirty = st.Commit, st.Dirty
			return res, err
		}
	}
	if o.Disabled {
		stale, err := staleFiles(s, abs, o)
		res := Result{Stale: stale}
		if err == nil {
			err = s.View(func(r *lmdbstore.ReadTxn) error {
				res.AsOf = r.Revision()
				g, ok, err := codetree.StoredGitState(r, lmdbstore.At{})
				if ok {
					res.Commit, res.Dirty = g.Commit, g.Dirty
				}
				return err
			})
		}
		return res, err
	}
	if st != nil && (st.Dir != abs || st.Config != o.config()) {
		st = nil
	}
	o, save := o.diskCache()
	res, err := refreshFull(s, abs, o, st)
	if err == nil && res.Summary != nil {
		if o.SaveLater {
			sum := *res.Summary
			res.saved = later(func() struct{} { save(sum); return struct{}{} })
		} else {
			save(*res.Summary)
		}
	}
	if err != nil {
		stale, serr := staleFiles(s, abs, o)
		if serr == nil {
			res.Stale = stale
		}
		return res, err
	}
	return res, nil
}

// Stale lists the files of dir whose content differs from what the store's
// code graph was ingested from (added, edited, deleted), without writing.
// Files an ingest would ignore by .gitignore may be listed too.
func Stale(s *lmdbstore.Store, dir string, o Options) ([]string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	return staleFiles(s, abs, o.withDefaults(s))
}

func (o Options) withDefaults(s *lmdbstore.Store) Options {
	if o.StatePath == "" {
		o.StatePath = filepath.Join(s.Path(), StateFile)
	}
	if len(o.Ingest.Langs) == 0 {
		o.Ingest.Langs = treesitter.TreeSitterLanguages
	}
	o.Ingest.RecordGit = true
	if o.Cache != nil {
		o.Ingest.Cache = o.Cache.code
	}
	return o
}

// config names what decides which files are read, so that a stat file
// written for other options is not trusted.
func (o Options) config() string {
	w := o.Ingest.Walk
	c := fmt.Sprintf("go=%t syntax=%t offline=%t vendor=%t testdata=%t hidden=%t langs=%s", o.Ingest.WithGo, o.Ingest.SyntaxOnly,
		o.Ingest.Offline, w.IncludeVendor, w.IncludeTestdata, w.IncludeHidden, strings.Join(o.Ingest.Langs, ","))
	if o.Ingest.Precise != nil {
		c += preciseConfig // §9.12: a refresh runs the indexers too
	}
	return c
}

// preciseConfig ends the config of a tree ingested with --precise.
const preciseConfig = " precise=true"

// unchanged is the fast check: same stored code, same HEAD, same stats.
// changed is the first file found changed ("" when the difference is
// elsewhere).
func (st *state) unchanged(s *lmdbstore.Store, abs string) (same bool, changed string, err error) {
	code, err := storedCode(s)
	if err != nil || code != st.Code {
		return false, "", err
	}
	if st.Commit != "" {
		if st.GitDir == "" {
			return false, "", nil
		}
		if c, ok := readHead(st.GitDir, st.CommonDir); !ok || c != st.Commit {
			return false, "", nil
		}
	}
	var buf []byte
	for _, e := range st.Entries {
		fi, err := os.Lstat(filepath.Join(abs, filepath.FromSlash(e.Path)))
		if err != nil {
			return false, e.Path, nil
		}
		if fi.ModTime().UnixNano() != e.MTime || (e.Kind == kindFile && fi.Size() != e.Size) {
			return false, e.Path, nil
		}
		if e.Kind == kindFile && e.MTime >= st.written {
			// Racy: changed within the stat file's clock tick. Compare content.
			if e.Hash == "" {
				return false, e.Path, nil
			}
			buf, err = readInto(buf, filepath.Join(abs, filepath.FromSlash(e.Path)))
			if err != nil || hashOf(buf) != e.Hash {
				return false, e.Path, nil
			}
		}
	}
	return true, "", nil
}

// storedCode is the stored tree hash of every language's last ingest, as
// one string: another process's ingest changes it.
func storedCode(s *lmdbstore.Store) (code string, err error) {
	err = s.View(func(r *lmdbstore.ReadTxn) error {
		code, err = readCode(r)
		return err
	})
	return code, err
}

func readCode(r *lmdbstore.ReadTxn) (string, error) {
	var b strings.Builder
	for _, lang := range ingest.Languages {
		n, err := r.GetNode(ingest.IngestKey(lang), lmdbstore.At{})
		if errors.Is(err, lmdbstore.ErrNotFound) {
			continue
		}
		if err != nil {
			return "", err
		}
		var p struct {
			TreeHash string `json:"tree_hash"`
		}
		if json.Unmarshal(n.Payload, &p) == nil {
			fmt.Fprintf(&b, "%s=%s;", lang, p.TreeHash)
		}
	}
	return b.String(), nil
}

// storedFileHash is the hash of the code file node of path ("" for none).
func storedFileHash(r *lmdbstore.ReadTxn, path string) (string, error) {
	n, err := r.GetNode(ingest.FileKey(path), lmdbstore.At{})
	if errors.Is(err, lmdbstore.ErrNotFound) {
		return "", nil
	}
	if err != nil || ingest.OwnerOf(n) == "" {
		return "", err
	}
	var p struct{ Hash string }
	_ = json.Unmarshal(n.Payload, &p)
	return p.Hash, nil
}

// knownHashes are the content hashes of the files of entries whose stat
// equals the one st recorded, taken before st was written (not racy): an
// ingest need not read them. None without st.
func (st *state) knownHashes(entries []entry) map[string]string {
	if st == nil {
		return nil
	}
	old := make(map[string]entry, len(st.Entries))
	for _, e := range st.Entries {
		if e.Kind == kindFile && e.Hash != "" && e.MTime < st.written {
			old[e.Path] = e
		}
	}
	out := make(map[string]string, len(old))
	for _, e := range entries {
		if o, ok := old[e.Path]; ok && e.Kind == kindFile && o.Size == e.Size && o.MTime == e.MTime {
			out[e.Path] = o.Hash
		}
	}
	return out
}

// refreshFull ingests abs and rewrites the stat file; prev, when not nil,
// is the stat file of the same tree and options, whose hashes of files
// with an unchanged stat spare the ingest reading them.
func refreshFull(s *lmdbstore.Store, abs string, o Options, prev *state) (Result, error) {
	// Stat before the ingest reads: an edit in between leaves the stat file
	// older than the file, so the next refresh sees it.
	walked := time.Now()
	entries, complete, err := walkStats(abs, o)
	if err != nil {
		return Result{}, &codetree.DirError{Dir: abs, Err: err}
	}
	known := prev.knownHashes(entries)
	o.Ingest.Known = known
	// The walk enters every directory the Go walk does (a superset): no
	// Go file in it, none there.
	o.Ingest.NoGoFiles = complete && !slices.ContainsFunc(entries, func(e entry) bool {
		return e.Kind == kindFile && strings.HasSuffix(e.Path, ".go")
	})
	// What the ingest will wait for starts now, on other goroutines,
	// while the cache file is read: the grammars of the files whose
	// content is not known (and git's status when HEAD moved: oneShotGit).
	var unknown []string
	for _, e := range entries {
		if _, ok := known[e.Path]; !ok {
			unknown = append(unknown, e.Path)
		}
	}
	treesitter.Warm(unknown)
	switch {
	case o.Cache != nil:
		o.Ingest.GitState = o.Cache.gitReader(abs, abs+"\x00"+o.config(), entries, currentHashes(abs, entries, known), walked)
	case o.loadCache != nil:
		prevCommit := ""
		if prev != nil {
			prevCommit = prev.Commit
		}
		o.Ingest.GitState = oneShotGit(o.loadCache, abs, abs+"\x00"+o.config(), entries, known, walked, prevCommit, o.gitRuns)
	}
	if o.loadCache != nil {
		o.Ingest.Cache = o.loadCache()
	}
	sum, stats, err := codetree.Ingest(s, abs, o.Ingest)
	if err != nil {
		return Result{}, err
	}
	res := Result{Refreshed: true, Rev: stats.Commit.Rev, Summary: &sum, Stats: stats, Changed: stats.Files}
	if res.Changed == nil {
		res.Changed = []string{}
	}
	st := &state{Dir: abs, Config: o.config(), Entries: entries}
	var moves []codetree.Move
	err = s.View(func(r *lmdbstore.ReadTxn) error {
		// The stat file's hashes: known ones stay (the ingest found them
		// so), the others are the stored file nodes'.
		for i := range entries {
			if h, ok := known[entries[i].Path]; ok && !slices.Contains(stats.Files, entries[i].Path) {
				entries[i].Hash = h
				continue
			}
			h, err := storedFileHash(r, entries[i].Path)
			if err != nil {
				return err
			}
			entries[i].Hash = h
		}
		var err error
		if st.Code, err = readCode(r); err != nil {
			return err
		}
		res.AsOf = r.Revision()
		g, ok, err := codetree.StoredGitState(r, lmdbstore.At{})
		if ok {
			res.Commit, res.Dirty = g.Commit, g.Dirty
		}
		if err != nil || stats.Commit.Rev == 0 {
			return err
		}
		return r.RevisionOps(stats.Commit.Rev, func(op lmdbstore.Op) error {
			if op.Kind == lmdbstore.OpPutKV && op.Scope == codetree.RecordScope && op.Namespace == codetree.MovesNamespace {
				m := codetree.Move{From: op.Key}
				if json.Unmarshal(op.Payload, &m) == nil {
					moves = append(moves, m)
				}
			}
			return nil
		})
	})
	if err != nil {
		return res, err
	}
	res.Moves = moves
	st.Commit, st.Dirty = res.Commit, res.Dirty
	if res.Commit != "" {
		st.GitDir, st.CommonDir = findGitDir(abs)
		if c, ok := readHead(st.GitDir, st.CommonDir); !ok || c != res.Commit {
			st.GitDir = "" // HEAD unreadable without git, or moved meanwhile: the next refresh asks git
			st.Commit = "?"
		}
	}
	// A stat file that cannot be written costs speed, not correctness.
	_ = writeState(o.StatePath, st)
	return res, nil
}

// currentHashes is the content hash of every file of entries: the known
// ones as they are, the others read (a file gone meanwhile is left out).
func currentHashes(abs string, entries []entry, known map[string]string) map[string]string {
	out := make(map[string]string, len(entries))
	var buf []byte
	for _, e := range entries {
		if e.Kind != kindFile {
			continue
		}
		if h, ok := known[e.Path]; ok {
			out[e.Path] = h
			continue
		}
		var err error
		if buf, err = readInto(buf, filepath.Join(abs, filepath.FromSlash(e.Path))); err == nil {
			out[e.Path] = hashOf(buf)
		}
	}
	return out
}

// storedFiles maps the path of every code file node to its hash.
func storedFiles(s *lmdbstore.Store) (map[string]string, error) {
	out := make(map[string]string)
	err := s.View(func(r *lmdbstore.ReadTxn) error {
		return r.ScanNodes(lmdbstore.At{}, func(n lmdbstore.Node) error {
			if !strings.HasPrefix(n.Key, "file:") || ingest.OwnerOf(n) == "" {
				return nil
			}
			var p struct{ Hash string }
			if json.Unmarshal(n.Payload, &p) == nil {
				out[n.Key[len("file:"):]] = p.Hash
			}
			return nil
		})
	})
	return out, err
}

// walkStats stats every directory either ingest may enter and every file
// an ingest may read below abs (a superset: more entries cost stats, never
// a missed change), sorted by path; complete is false when a directory
// could not be read (and was left out).
func walkStats(abs string, o Options) (_ []entry, complete bool, _ error) {
	w := o.Ingest.Walk
	var out []entry
	complete = true
	err := filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() && p != abs {
				complete = false
				return filepath.SkipDir
			}
			return err
		}
		rel, _ := filepath.Rel(abs, p)
		rel = filepath.ToSlash(rel)
		name := d.Name()
		if d.IsDir() {
			if rel != "." && skipDir(name, w, o.Ingest.WithGo) {
				return filepath.SkipDir
			}
		} else if !d.Type().IsRegular() || !ingest.IngestedName(name) {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil // gone meanwhile: the ingest will not see it either
		}
		e := entry{Path: rel, Kind: kindFile, Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
		if d.IsDir() {
			e.Kind, e.Size = kindDir, 0
		}
		out = append(out, e)
		return nil
	})
	return out, complete, err
}

// skipDir leaves out the directories no ingest enters (SPEC.md §9.1):
// hidden ones, vendor and testdata unless included; without Go also
// those only the tree-sitter walk skips.
func skipDir(name string, w ingest.WalkOptions, withGo bool) bool {
	switch {
	case strings.HasPrefix(name, "."):
		return !w.IncludeHidden
	case name == "vendor":
		return !w.IncludeVendor
	case name == "testdata":
		return !w.IncludeTestdata
	}
	if !withGo {
		switch name {
		case "node_modules", "bower_components", "site-packages", "dist-packages":
			return !w.IncludeVendor
		case "target", "dist", "build", "__pycache__":
			return true
		}
	}
	return false
}

// staleFiles compares the tree with the stored file hashes: a file whose
// stat matches the stat file is taken as unchanged, every other one is
// read and hashed.
func staleFiles(s *lmdbstore.Store, abs string, o Options) ([]string, error) {
	stored, err := storedFiles(s)
	if err != nil {
		return nil, err
	}
	known := map[string]entry{}
	if st, _ := readState(o.StatePath); st != nil && st.Dir == abs {
		for _, e := range st.Entries {
			if e.Kind == kindFile && e.MTime < st.written && e.Hash != "" {
				known[e.Path] = e
			}
		}
	}
	entries, _, err := walkStats(abs, o)
	if err != nil {
		return nil, &codetree.DirError{Dir: abs, Err: err}
	}
	out := []string{}
	seen := map[string]bool{}
	var buf []byte
	for _, e := range entries {
		if e.Kind != kindFile {
			continue
		}
		seen[e.Path] = true
		if !codeFile(e.Path) {
			continue // config files have no node to compare with
		}
		if k, ok := known[e.Path]; ok && k.Size == e.Size && k.MTime == e.MTime && stored[e.Path] == k.Hash {
			continue
		}
		buf, err = readInto(buf, filepath.Join(abs, filepath.FromSlash(e.Path)))
		if err != nil || hashOf(buf) != stored[e.Path] {
			out = append(out, e.Path)
		}
	}
	for p := range stored {
		if !seen[p] {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out, nil
}

func codeFile(p string) bool {
	switch path.Ext(p) {
	case ".go", ".py", ".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs", ".rs":
		return true
	}
	return false
}

func readInto(buf []byte, file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return buf, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return buf, err
	}
	buf = slices.Grow(buf[:0], int(fi.Size()))[:fi.Size()]
	_, err = f.ReadAt(buf, 0)
	return buf, err
}

func hashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
