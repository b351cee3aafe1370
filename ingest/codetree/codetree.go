// Package codetree ingests a whole code tree: Go through ingest's
// type-checked path and Python, TypeScript, JavaScript and Rust through
// tree-sitter, merged into one graph and written as one revision (SPEC.md
// §9). It is what `memctl ingest code|LANG` and the MCP `ingest` tool run.
//
// Invariants: a tree whose per-language hashes match the last ingest is
// not re-read (unless Force) and writes nothing; a language that is read
// replaces exactly the nodes and edges that language owns; a failure
// leaves the store as it was.
package codetree

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/ingest/precise"
	"github.com/memctl/memctl/ingest/treesitter"
	"github.com/memctl/memctl/lmdbstore"
)

// Options configures an ingest.
type Options struct {
	// Langs are the tree-sitter languages to read (treesitter.TreeSitterLanguages
	// for all of them).
	Langs []string
	// WithGo also reads Go (type-checked) when the tree has Go files or an
	// earlier ingest left Go nodes to update.
	WithGo     bool
	SyntaxOnly bool // Go: resolve names from syntax alone
	Offline    bool // Go: download nothing (ingest.GoOptions.Offline)
	Force      bool // re-read trees whose hashes match the last ingest
	Walk       ingest.WalkOptions
	Meta       lmdbstore.WriteMeta
	Progress   func(ingest.Progress) // nil: none
	// RecordGit records, in the revision of the ingest, the git commit the
	// tree is at and whether it is dirty (the kv entry memctl/ingest/git,
	// SPEC.md §9.7); a move of HEAD alone then writes that entry. Off for a
	// tree outside git.
	RecordGit bool
	// NoFollowMoves leaves memory edges and applies_to keys on deleted
	// nodes instead of carrying them to the nodes they moved to (§9.8).
	NoFollowMoves bool
	// Cache, when set, is kept between ingests of one tree by a
	// long-lived process: the next ingest parses only contents it has
	// not seen and compares with the store only what changed (cache.go).
	Cache *Cache
	// Known maps files (slash paths) to their content hash when the
	// caller knows it without reading them (a stat unchanged since they
	// were hashed); with Cache, such files are not read.
	Known map[string]string
	// NoGoFiles: the caller walked the tree just before, entering every
	// directory the Go walk enters, and found no Go file; the ingest does
	// not walk it again to know (ingest.HasGoFiles).
	NoGoFiles bool
	// GitState, when set, reads the git state RecordGit records instead
	// of ingest.ReadGitState (a refresh that can tell it without running
	// git).
	GitState func(dir string) (ingest.GitState, bool, error)
	// Precise runs the SCIP indexers found for the languages read and lets
	// their indexes decide calls, references and implements (§9.12); nil:
	// syntax (and Go's type-checking) only.
	Precise *precise.Options
}

// Lang is one language of a Summary (SPEC.md §9.6, `--json`).
type Lang struct {
	Lang        string `json:"lang"`
	Files       int    `json:"files"`
	Symbols     int    `json:"symbols"`
	Edges       int    `json:"edges"`
	Unresolved  int    `json:"unresolved"`
	ParseErrors int    `json:"parse_errors"`
	Unchanged   bool   `json:"unchanged"`
	Mode        string `json:"mode,omitempty"`
}

// Summary is what an ingest read and wrote (SPEC.md §9.6, `--json`).
type Summary struct {
	Dir          string   `json:"dir"`
	Languages    []Lang   `json:"languages"`
	Unchanged    bool     `json:"unchanged"`
	Nodes        int      `json:"nodes"`
	Edges        int      `json:"edges"`
	Rev          uint64   `json:"rev"`
	NodesPut     int      `json:"nodes_put"`
	NodesDeleted int      `json:"nodes_deleted"`
	EdgesPut     int      `json:"edges_put"`
	EdgesDeleted int      `json:"edges_deleted"`
	Seconds      float64  `json:"seconds"`
	LoadErrors   []string `json:"load_errors"`
	// Fallbacks name the Go packages read from syntax although
	// type-checking was asked for, why, and the fix.
	Fallbacks []ingest.Fallback `json:"fallbacks"`
	// Precise says, with Options.Precise, which indexer read each
	// language extracted and why a language stayed on syntax.
	Precise []precise.Lang `json:"precise,omitempty"`
}

// DirError: the tree could not be read (not a directory, unreadable); the
// store is untouched.
type DirError struct {
	Dir string
	Err error
}

func (e *DirError) Error() string { return fmt.Sprintf("%s: %v", e.Dir, e.Err) }
func (e *DirError) Unwrap() error { return e.Err }

// ErrRaced: another process ingested the tree between this ingest's read
// of the stored tree hashes and its write transaction, every retry. The
// store is untouched.
var ErrRaced = errors.New("codetree: another ingest kept changing the store")

// maxAttempts bounds the re-reads when another ingest races this one.
const maxAttempts = 4

// Ingest reads dir and writes what changed as one revision. The returned
// WriteStats are zero when nothing was written. The tree hashes the
// extraction was compared with are checked again inside the write
// transaction; when another ingest changed them meanwhile, Ingest starts
// over, so concurrent ingests of one tree write each change once and an
// older read never overwrites a newer one.
func Ingest(s *lmdbstore.Store, dir string, o Options) (Summary, ingest.WriteStats, error) {
	for attempt := 1; ; attempt++ {
		out, stats, err := ingestOnce(s, dir, o)
		if errors.Is(err, errRaced) {
			if attempt < maxAttempts {
				continue
			}
			return out, stats, ErrRaced
		}
		return out, stats, err
	}
}

var errRaced = errors.New("raced")

// storedHashes reads the tree hash of every language's last ingest.
func storedHashes(r *lmdbstore.ReadTxn) (map[string]string, error) {
	return storedField(r, "tree_hash")
}

func ingestOnce(s *lmdbstore.Store, dir string, o Options) (Summary, ingest.WriteStats, error) {
	if o.Cache != nil && o.Cache.parses.Over() {
		o.Cache = nil // a tree too large to keep: every ingest as without a cache
	}
	if o.Cache != nil {
		o.Cache.mu.Lock()
		defer o.Cache.mu.Unlock()
	}
	out := Summary{Dir: dir, LoadErrors: []string{}, Languages: []Lang{}, Fallbacks: []ingest.Fallback{}}
	var stats ingest.WriteStats
	g := ingest.NewGraph()
	var written []string

	var hashes, modes map[string]string
	var viewRev lmdbstore.Revision
	if err := s.View(func(r *lmdbstore.ReadTxn) (err error) {
		if hashes, err = storedHashes(r); err != nil {
			return err
		}
		viewRev = r.Revision()
		o.Cache.forgetIfEdited(r)
		modes, err = storedPrecise(r)
		return err
	}); err != nil {
		return out, stats, err
	}
	ps := newPreciseState(o, modes)
	var gitState ingest.GitState
	hasGit := false
	if o.RecordGit {
		var err error
		read := o.GitState
		if read == nil {
			read = ingest.ReadGitState
		}
		if gitState, hasGit, err = read(dir); err != nil {
			return out, stats, &DirError{dir, err}
		}
	}

	if o.WithGo {
		stored := hashes[ingest.LangGo]
		has, err := false, error(nil)
		if !o.NoGoFiles {
			has, err = ingest.HasGoFiles(dir, o.Walk)
		}
		if err != nil {
			return out, stats, &DirError{dir, err}
		}
		switch {
		case !has && stored != "":
			// The last Go file went: the Go share becomes empty, as a
			// fresh ingest of the tree leaves it (no ingest:go node).
			written = append(written, ingest.LangGo)
			out.Languages = append(out.Languages, Lang{Lang: ingest.LangGo})
		case has:
			opts := ingest.GoOptions{WalkOptions: o.Walk, SyntaxOnly: o.SyntaxOnly, Offline: o.Offline, Progress: o.Progress}
			if o.Cache != nil {
				opts.Cache, opts.Known = o.Cache.goc, o.Known
			}
			if !o.Force {
				opts.SkipIfTreeHash = ps.skipHash(hashes, ingest.LangGo)
			}
			res, err := ingest.ExtractGo(dir, opts)
			if err != nil {
				return out, stats, &DirError{dir, err}
			}
			out.LoadErrors = append(out.LoadErrors, res.LoadErrors...)
			out.Fallbacks = append(out.Fallbacks, res.Fallbacks...)
			l := Lang{Lang: ingest.LangGo, Files: res.Files, Unchanged: res.Unchanged, Mode: GoMode(res),
				Unresolved: res.Unresolved}
			if !res.Unchanged {
				g = res.Graph // g is empty: Go comes first
				written = append(written, ingest.LangGo)
				l.Symbols, l.Edges = countGo(res.Graph)
			}
			out.Languages = append(out.Languages, l)
		}
	}

	config := cacheConfig(dir, o)
	last := o.Cache.usable(config, hashes)
	opts := treesitter.Options{WalkOptions: o.Walk, Progress: o.Progress, OmitAbsent: o.WithGo,
		SkipIfTreeHash: make(map[string]string), Known: o.Known}
	if o.Cache != nil {
		// Every tree-sitter language, so that the graph is the whole
		// share the next ingest compares with.
		opts.Cache, opts.AllIfAny = o.Cache.parses, true
		if last != nil {
			opts.Nodes, opts.Edges = last.graph.NumNodes(), last.graph.NumEdges()
			if !o.Force && o.Precise == nil {
				// The graph the last extraction gave (precise mode
				// rewrites its calls): what did not change is reused.
				opts.Previous = last.graph
			}
		}
	}
	for _, lang := range o.Langs {
		if h := ps.skipHash(hashes, lang); h != "" {
			opts.SkipIfTreeHash[lang] = h
		}
	}
	if o.Force {
		opts.SkipIfTreeHash = nil
	}
	res, err := treesitter.Extract(dir, o.Langs, opts)
	if err != nil {
		return out, stats, &DirError{dir, err}
	}
	tsGraph := res.Graph
	// Force re-reads to repair: it compares everything with the store.
	// Precise mode rewrites the extracted graph's calls from the indexes
	// (ps.apply): the delta path compares the extraction alone, so it is
	// used only without it.
	delta := last != nil && !o.Force && o.Precise == nil && len(res.Extracted) > 0 && !slices.Contains(written, ingest.LangGo)
	// Go alone changed: compared with the Go graph the cache last wrote.
	goOnly := slices.Equal(written, []string{ingest.LangGo}) && len(res.Extracted) == 0
	lastGo := o.Cache.usableGo(config, hashes)
	goDelta := goOnly && lastGo != nil && !o.Force && o.Precise == nil
	if !delta {
		mergeGraph(g, res.Graph)
	}
	written = append(written, res.Extracted...)
	for _, l := range res.Langs {
		out.Languages = append(out.Languages, Lang{Lang: l.Lang, Files: l.Files, Symbols: l.Symbols, Edges: l.Edges,
			Unresolved: l.Unresolved, ParseErrors: l.ParseErrors, Unchanged: l.Unchanged})
	}
	g = ps.apply(dir, g, written, &out, o.Progress)

	out.Unchanged = len(written) == 0
	if delta {
		g = tsGraph
	}
	if !out.Unchanged {
		out.Nodes, out.Edges = g.NumNodes(), g.NumEdges()
	}
	var after map[string]string // stored tree hashes after the write
	var quiet bool              // no code key written between the read and the write
	if !out.Unchanged || hasGit {
		meta := o.Meta
		meta.Derived = true // code structure, not free text: no secret scan (SPEC §2)
		c, err := s.Update(meta, func(tx *lmdbstore.WriteTxn) error {
			now, err := storedHashes(tx.Reader())
			if err != nil {
				return err
			}
			if !maps.Equal(now, hashes) {
				return errRaced
			}
			if nowModes, err := storedPrecise(tx.Reader()); err != nil || !maps.Equal(nowModes, modes) {
				return cmp.Or(err, errRaced)
			}
			// A hand edit of a code key since the read: a delta compares
			// it all instead, and no cached graph outlives this write.
			quiet = true
			if last != nil || lastGo != nil {
				quiet = !codeWrittenSince(tx.Reader(), viewRev, tx.Revision()-1)
			}
			if (delta || goDelta) && !quiet {
				return errRaced
			}
			var prev ingest.GitState
			if hasGit {
				if prev, _, err = StoredGitState(tx.Reader(), lmdbstore.At{}); err != nil {
					return err
				}
			}
			if !out.Unchanged {
				switch {
				case delta:
					stats, err = ingest.WriteCodeDeltaTx(tx, g, last.graph, written, last.others, o.Progress)
				case goDelta:
					stats, err = ingest.WriteCodeDeltaTx(tx, g, lastGo.graph, written, lastGo.others, o.Progress)
				default:
					stats, err = ingest.WriteCodeTx(tx, g, written, o.Progress)
				}
				if err != nil {
					return err
				}
				if after, err = storedHashes(tx.Reader()); err != nil {
					return err
				}
				if !o.NoFollowMoves {
					moves := DetectMoves(dir, prev.Commit, stats.Deleted, stats.Created)
					if err := CarryMoves(tx, moves); err != nil {
						return err
					}
				}
			}
			if hasGit {
				return tx.PutKV(lmdbstore.KVPut{Scope: RecordScope, Namespace: IngestNamespace, Key: GitKey,
					Payload: ingest.MustJSON(gitState)})
			}
			return nil
		})
		stats.Commit = c
		if err != nil {
			return out, stats, err
		}
	}
	kept := false // the tree-sitter graph stands (rememberGo)
	if o.Cache != nil && !out.Unchanged {
		tsOnly := !slices.Contains(written, ingest.LangGo) && o.Precise == nil
		kept = o.Cache.rememberGo(config, g, goOnly && o.Precise == nil, tsOnly, goDelta, quiet, lastGo, stats.OtherFiles, after, last, stats.Commit.Rev)
	}
	if o.Cache != nil && !out.Unchanged && !kept {
		// What the store's tree-sitter share now is, when this ingest
		// built all of it; otherwise unknown until the next one does.
		o.Cache.last = nil
		if delta {
			o.Cache.deltas++
		}
		if len(res.Extracted) > 0 && len(res.Extracted) == len(res.Langs) {
			var others []string
			if delta {
				others = last.others
			} else {
				others = otherFiles(g, stats.OtherFiles)
			}
			o.Cache.remember(config, g, others, after, stats.Commit.Rev)
		}
	}
	out.Rev = uint64(stats.Commit.Rev)
	out.NodesPut, out.NodesDeleted = stats.NodesPut, stats.NodesDeleted
	out.EdgesPut, out.EdgesDeleted = stats.EdgesPut, stats.EdgesDeleted
	return out, stats, nil
}

// GoMode names how Go was resolved: "type-checked", "syntax-only" or the
// mix.
func GoMode(res *ingest.GoResult) string {
	switch res.Mode {
	case ingest.ModeTyped:
		return "type-checked"
	case ingest.ModeSyntax:
		return "syntax-only"
	}
	return fmt.Sprintf("%d type-checked, %d syntax-only", res.TypedPackages, res.SyntaxPackages)
}

// mergeGraph adds the nodes and edges of src to dst.
func mergeGraph(dst, src *ingest.Graph) {
	if src == nil {
		return
	}
	src.EachNode(dst.AddNode)
	src.EachEdge(dst.AddEdge)
}

// countGo counts the symbols of a Go graph and the edges leaving its
// nodes other than directories.
func countGo(g *ingest.Graph) (symbols, edges int) {
	g.EachNode(func(n ingest.Node) {
		if n.Type == ingest.TypeSymbol {
			symbols++
		}
	})
	g.EachEdge(func(e ingest.Edge) {
		if !strings.HasPrefix(e.Src, "dir:") {
			edges++
		}
	})
	return symbols, edges
}
