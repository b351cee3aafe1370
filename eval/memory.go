package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/ingest/codetree"
	"github.com/memctl/memctl/ingest/treesitter"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/snapshot"
	"github.com/memctl/memctl/storesnap"
)

// Memory is the memory of the evaluated directory as it was at one commit:
// the store after `ingest code` and `ingest git` of a checkout of that commit,
// and a snapshot exported from it. It is valid until the next commit is
// built (predictors must not keep it).
type Memory struct {
	Commit   string
	Dir      string           // the ingested directory, checked out at Commit
	Store    *lmdbstore.Store // open; predictors only read it
	Snapshot string           // path of the exported snapshot (with a PageRank section)
	Graph    *csr.Graph
	Engine   *engines.Engine
	// Time is the commit time of Commit: "now" for recency, since nothing
	// after it is known.
	Time time.Time

	closers []func() // run by close, newest first (predictors' resources)

	files   []string                 // Go and other file paths with a node, sorted
	byPath  map[string]csr.NodeIndex // file path → node index
	history map[string]FileHistory   // file path → its git payload
}

// FileHistory is the "git" field of a file node's payload (SPEC.md §9.3).
type FileHistory struct {
	Changes    int       `json:"changes"`
	LastChange time.Time `json:"-"`
	Last       string    `json:"last_change"`
	LastCommit string    `json:"last_commit"`
}

// FileNode is the node index of the file at path (relative to the
// evaluated directory).
func (m *Memory) FileNode(path string) (csr.NodeIndex, bool) {
	n, ok := m.byPath[path]
	return n, ok
}

// Files lists the paths of every file node, sorted.
func (m *Memory) Files() []string { return m.files }

// History is the git history of the file at path (zero when it has none).
func (m *Memory) History(path string) FileHistory { return m.history[path] }

// FilePath is the path of node n when it is a file node.
func (m *Memory) FilePath(n csr.NodeIndex) (string, bool) {
	key, err := m.Graph.Key(n)
	if err != nil {
		return "", false
	}
	p, ok := strings.CutPrefix(key, "file:")
	return p, ok
}

// index reads the file nodes of the snapshot.
func (m *Memory) index() error {
	lo, hi, err := m.Graph.PrefixRange("file:")
	if err != nil {
		return err
	}
	order, err := m.Graph.KeyOrder()
	if err != nil {
		return err
	}
	m.byPath = make(map[string]csr.NodeIndex, hi-lo)
	m.history = make(map[string]FileHistory, hi-lo)
	for _, n := range order[lo:hi] {
		key, err := m.Graph.Key(n)
		if err != nil {
			return err
		}
		p := strings.Clone(strings.TrimPrefix(key, "file:")) // outlives nothing, but callers keep paths
		m.files = append(m.files, p)
		m.byPath[p] = n
		payload, err := m.Graph.Payload(n)
		if err != nil {
			return err
		}
		var fp struct {
			Git *FileHistory `json:"git"`
		}
		if len(payload) > 0 && json.Unmarshal(payload, &fp) == nil && fp.Git != nil {
			h := *fp.Git
			h.LastChange, _ = time.Parse(time.RFC3339, h.Last)
			m.history[p] = h
		}
	}
	return nil
}

// onClose registers fn to run when the memory is closed (before the next
// commit's memory replaces it).
func (m *Memory) onClose(fn func()) { m.closers = append(m.closers, fn) }

func (m *Memory) close() error {
	if m == nil {
		return nil
	}
	for i := len(m.closers) - 1; i >= 0; i-- {
		m.closers[i]()
	}
	m.closers = nil
	if m.Graph == nil {
		return nil
	}
	err := m.Graph.Close()
	m.Graph = nil
	return err
}

// builder makes Memory at commit after commit from one store and one
// worktree, both kept in the work directory.
type builder struct {
	repo  *Repo
	wt    *worktree
	store *lmdbstore.Store
	snap  string
	opts  Options
	cur   *Memory
	// fallbacks are the Go packages ingest read from syntax alone at some
	// commit although type-checking was asked for, the first time each.
	fallbacks []ingest.Fallback
}

// newBuilder opens (or creates) the store and the worktree under work.
func newBuilder(repo *Repo, work string, opts Options) (*builder, error) {
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, err
	}
	storePath := filepath.Join(work, "store")
	sopts := lmdbstore.Options{NoSync: true}
	s, err := lmdbstore.Open(storePath, sopts)
	if errors.Is(err, lmdbstore.ErrNotExist) {
		s, err = lmdbstore.Init(storePath, sopts)
	}
	if err != nil {
		return nil, err
	}
	wt, err := openWorktree(repo, filepath.Join(work, "tree"))
	if err != nil {
		s.Close()
		return nil, err
	}
	return &builder{repo: repo, wt: wt, store: s, snap: filepath.Join(work, "memory.snap"), opts: opts}, nil
}

// at builds the memory of the evaluated directory at commit.
func (b *builder) at(commit string) (*Memory, error) {
	if err := b.cur.close(); err != nil {
		return nil, err
	}
	b.cur = nil
	if err := b.wt.checkout(commit); err != nil {
		return nil, err
	}
	dir := b.repo.Dir(b.wt.path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		// The evaluated directory did not exist yet: empty memory.
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	meta := lmdbstore.WriteMeta{RunID: "eval", TaskID: commit}
	// Every language, as `ingest code` reads it (Go type-checked unless
	// SyntaxOnly); a language whose tree hash is unchanged is not re-read.
	sum, _, err := codetree.Ingest(b.store, dir, codetree.Options{Langs: treesitter.TreeSitterLanguages, WithGo: true,
		SyntaxOnly: b.opts.SyntaxOnly, Walk: b.opts.Walk, Meta: meta, NoFollowMoves: true})
	if err != nil {
		return nil, fmt.Errorf("ingest code at %s: %w", short(commit), err)
	}
	for _, f := range sum.Fallbacks {
		if !slices.ContainsFunc(b.fallbacks, func(g ingest.Fallback) bool { return g.Package == f.Package }) {
			// The fix runs in the user's checkout, not in the worktree
			// removed at the end.
			f.Fix = strings.ReplaceAll(f.Fix, b.wt.path, b.repo.Top)
			b.fallbacks = append(b.fallbacks, f)
		}
	}
	gitres, err := ingest.ExtractGit(dir, ingest.GitOptions{WalkOptions: b.opts.Walk})
	if err != nil {
		return nil, fmt.Errorf("ingest git at %s: %w", short(commit), err)
	}
	if _, err := ingest.WriteGit(b.store, gitres, meta, nil); err != nil {
		return nil, fmt.Errorf("ingest git at %s: %w", short(commit), err)
	}
	wopts := snapshot.WriterOptions{Extra: engines.PageRankSection}
	if _, _, err := storesnap.Export(b.store, b.snap, lmdbstore.At{}, wopts); err != nil {
		return nil, fmt.Errorf("export at %s: %w", short(commit), err)
	}
	g, err := csr.Open(b.snap)
	if err != nil {
		return nil, err
	}
	m := &Memory{Commit: commit, Dir: dir, Store: b.store, Snapshot: b.snap, Graph: g}
	b.cur = m
	if m.Engine, err = engines.New(g); err != nil {
		return nil, err
	}
	ct, err := git(dir, "show", "-s", "--format=%ct", commit)
	if err != nil {
		return nil, err
	}
	var sec int64
	if _, err := fmt.Sscan(strings.TrimSpace(ct), &sec); err != nil {
		return nil, fmt.Errorf("commit time of %s: %q", short(commit), ct)
	}
	m.Time = time.Unix(sec, 0).UTC()
	if err := m.index(); err != nil {
		return nil, err
	}
	return m, nil
}

// close releases the memory and the store and removes the worktree (the
// store stays in the work directory).
func (b *builder) close() error {
	err := b.cur.close()
	if cerr := b.store.Close(); err == nil {
		err = cerr
	}
	if rerr := b.wt.remove(); err == nil {
		err = rerr
	}
	return err
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
