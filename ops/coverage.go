package ops

// Coverage of an answer (SPEC.md §8.7): what the graph of the answer's
// region is known not to hold. Ingest records, per file, the calls it
// could not resolve (`unresolved`, §9.3) and, per Go package, whether it
// was type-checked (`mode`); an answer sums those over the files it
// involves, so an agent knows when to fall back to a text search.

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/records"
)

// Payloads looks a node's payload up by key; ok is false when there is no
// such live node. EnginePayloads and StorePayloads are the two sources.
type Payloads func(key string) (payload []byte, ok bool, err error)

// EnginePayloads reads payloads from an engine's snapshot.
func EnginePayloads(eng *engines.Engine) Payloads {
	g := eng.Graph()
	return func(key string) ([]byte, bool, error) { return payloadOf(g, key) }
}

// StorePayloads reads payloads from the store at a view.
func StorePayloads(r *lmdbstore.ReadTxn, at lmdbstore.At) Payloads {
	return func(key string) ([]byte, bool, error) {
		n, err := r.GetNode(key, at)
		if errors.Is(err, lmdbstore.ErrNotFound) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		return n.Payload, len(n.Payload) > 0, nil
	}
}

// Coverage sums what ingest could not resolve over the files of keys (a
// file key, or a symbol's or package's file(s) as its payload names them).
func Coverage(payloadOf Payloads, keys []string) (records.Coverage, error) {
	return coverage(perCall(payloadOf), keys)
}

// coverage is Coverage over the facts of each key's payload.
func coverage(factsOf func(key string) (payloadFacts, error), keys []string) (records.Coverage, error) {
	files := map[string]bool{}
	pkgs := map[string]bool{}
	for _, k := range keys {
		f, err := factsOf(k)
		if err != nil {
			return records.Coverage{}, err
		}
		if !f.ok {
			continue
		}
		switch {
		case strings.HasPrefix(k, "file:"):
			files[strings.TrimPrefix(k, "file:")] = true
		case f.path != "":
			files[f.path] = true
		}
		if f.importPath != "" && f.mode == "syntax" {
			pkgs[f.importPath] = true
		}
	}
	out := records.Coverage{Files: len(files)}
	type count struct {
		path string
		n    int
	}
	var counts []count
	for file := range files {
		f, err := factsOf("file:" + file)
		if err != nil {
			return records.Coverage{}, err
		}
		if !f.ok || !f.sums {
			continue
		}
		if f.unresolved > 0 {
			out.Unresolved += f.unresolved
			counts = append(counts, count{file, f.unresolved})
		}
		if f.sumsMode == "syntax" && f.pkg != "" {
			pkgs[f.pkg] = true
		}
	}
	slices.SortFunc(counts, func(a, b count) int {
		if a.n != b.n {
			return b.n - a.n
		}
		return strings.Compare(a.path, b.path)
	})
	for _, c := range counts[:min(len(counts), 10)] {
		out.UnresolvedFiles = append(out.UnresolvedFiles, c.path)
	}
	for p := range pkgs {
		out.SyntaxOnly = append(out.SyntaxOnly, p)
	}
	slices.Sort(out.SyntaxOnly)
	out.Partial = out.Unresolved > 0 || len(out.SyntaxOnly) > 0
	return out, nil
}

// payloadFacts is what coverage reads from one key's payload: where the
// node is (a file's path, a package's import path and mode), and, for a
// file, its sums (valid when its payload has the ingest shape).
type payloadFacts struct {
	ok                     bool // a node with a payload
	path, importPath, mode string
	sums                   bool
	unresolved             int
	sumsMode, pkg          string
}

// factsOf decodes payload p (of a node, when ok) as coverage reads it:
// where the node is (as far as the payload gives it), and its sums when
// the payload decodes into their shape. One decode serves both when it
// meets no error (a file's payload on the Go standard library carries its
// lexical terms: each decode scans them); otherwise each is decoded apart,
// so that an ill-typed field of one does not cost the other.
func factsOf(p []byte, ok bool) payloadFacts {
	if !ok {
		return payloadFacts{}
	}
	var both struct {
		Path       string `json:"path"`
		ImportPath string `json:"import_path"`
		Mode       string `json:"mode"`
		Unresolved int    `json:"unresolved"`
		Package    string `json:"package"`
	}
	if json.Unmarshal(p, &both) == nil {
		return payloadFacts{ok: true, path: both.Path, importPath: both.ImportPath, mode: both.Mode,
			sums: true, unresolved: both.Unresolved, sumsMode: both.Mode, pkg: both.Package}
	}
	return factsApart(p)
}

// factsApart is factsOf decoding the place and the sums apart.
func factsApart(p []byte) payloadFacts {
	var where struct {
		Path       string `json:"path"`
		ImportPath string `json:"import_path"`
		Mode       string `json:"mode"`
	}
	_ = json.Unmarshal(p, &where) // not the ingest shape: nothing to add
	var sums struct {
		Unresolved int    `json:"unresolved"`
		Mode       string `json:"mode"`
		Package    string `json:"package"`
	}
	valid := json.Unmarshal(p, &sums) == nil
	return payloadFacts{ok: true, path: where.Path, importPath: where.ImportPath, mode: where.Mode,
		sums: valid, unresolved: sums.Unresolved, sumsMode: sums.Mode, pkg: sums.Package}
}

// perCall reads and decodes each key's payload once per Coverage: a file
// is asked for by its key and again for its sums (on the Go standard
// library a file's payload carries its lexical terms; reading them twice
// was most of the coverage of a context pack).
func perCall(payloadOf Payloads) func(string) (payloadFacts, error) {
	seen := map[string]payloadFacts{}
	return func(key string) (payloadFacts, error) {
		if f, ok := seen[key]; ok {
			return f, nil
		}
		p, ok, err := payloadOf(key)
		if err != nil {
			return payloadFacts{}, err
		}
		f := factsOf(p, ok)
		seen[key] = f
		return f, nil
	}
}

// maxCoverageFacts bounds the keys a CoverageMemo keeps.
const maxCoverageFacts = 1 << 16

// CoverageMemo keeps what StoreCoverage decoded from each key's payload at
// one view revision (the committed state of a revision never changes), for
// a long-lived process answering many packs: the regions of neighbouring
// targets overlap. A new revision starts it over. The zero value is ready;
// safe for concurrent use.
type CoverageMemo struct {
	mu    sync.Mutex
	rev   lmdbstore.Revision
	facts map[string]payloadFacts
}

func (m *CoverageMemo) get(rev lmdbstore.Revision, key string) (payloadFacts, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.facts[key]
	return f, ok && m.rev == rev
}

func (m *CoverageMemo) put(rev lmdbstore.Revision, key string, f payloadFacts) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rev != rev || m.facts == nil || len(m.facts) >= maxCoverageFacts {
		m.rev, m.facts = rev, make(map[string]payloadFacts)
	}
	m.facts[key] = f
}

// payloadOf is the payload of the node named key; ok is false when the
// snapshot has no such live node.
func payloadOf(g *csr.Graph, key string) ([]byte, bool, error) {
	n, ok, err := g.LookupKey(key)
	if err != nil || !ok {
		return nil, false, err
	}
	p, err := g.Payload(n)
	return p, err == nil && len(p) > 0, err
}

// StoreCoverage is Coverage over the store at a view (for context packs,
// which read the store); nil when keys involve no file. memo, when not
// nil, keeps the payloads' facts of the view's revision for later calls.
func StoreCoverage(s *lmdbstore.Store, at lmdbstore.At, keys []string, memo *CoverageMemo) (*records.Coverage, error) {
	var c records.Coverage
	err := s.View(func(r *lmdbstore.ReadTxn) error {
		facts := perCall(StorePayloads(r, at))
		if memo != nil {
			rev, err := r.Resolve(at)
			if err != nil {
				return err
			}
			read := facts
			facts = func(key string) (payloadFacts, error) {
				if f, ok := memo.get(rev, key); ok {
					return f, nil
				}
				f, err := read(key)
				if err == nil {
					memo.put(rev, key, f)
				}
				return f, err
			}
		}
		var err error
		c, err = coverage(facts, keys)
		return err
	})
	if err != nil || c.Files == 0 {
		return nil, err
	}
	return &c, nil
}
