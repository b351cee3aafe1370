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
	payloadOf = payloadOf.once()
	files := map[string]bool{}
	pkgs := map[string]bool{}
	for _, k := range keys {
		p, ok, err := payloadOf(k)
		if err != nil {
			return records.Coverage{}, err
		}
		if !ok {
			continue
		}
		var pl struct {
			Path       string `json:"path"`
			ImportPath string `json:"import_path"`
			Mode       string `json:"mode"`
		}
		_ = json.Unmarshal(p, &pl) // not the ingest shape: nothing to add
		switch {
		case strings.HasPrefix(k, "file:"):
			files[strings.TrimPrefix(k, "file:")] = true
		case pl.Path != "":
			files[pl.Path] = true
		}
		if pl.ImportPath != "" && pl.Mode == "syntax" {
			pkgs[pl.ImportPath] = true
		}
	}
	out := records.Coverage{Files: len(files)}
	type count struct {
		path string
		n    int
	}
	var counts []count
	for f := range files {
		p, ok, err := payloadOf("file:" + f)
		if err != nil {
			return records.Coverage{}, err
		}
		if !ok {
			continue
		}
		var pl struct {
			Unresolved int    `json:"unresolved"`
			Mode       string `json:"mode"`
			Package    string `json:"package"`
		}
		if json.Unmarshal(p, &pl) != nil {
			continue
		}
		if pl.Unresolved > 0 {
			out.Unresolved += pl.Unresolved
			counts = append(counts, count{f, pl.Unresolved})
		}
		if pl.Mode == "syntax" && pl.Package != "" {
			pkgs[pl.Package] = true
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

// once is p reading each key once: Coverage asks for a file's payload for
// the file's key and again for its own sums (on the Go standard library
// a file's payload carries its lexical terms, and reading them twice was
// most of the coverage of a context pack).
func (p Payloads) once() Payloads {
	type read struct {
		payload []byte
		ok      bool
	}
	seen := map[string]read{}
	return func(key string) ([]byte, bool, error) {
		if r, ok := seen[key]; ok {
			return r.payload, r.ok, nil
		}
		payload, ok, err := p(key)
		if err != nil {
			return nil, false, err
		}
		seen[key] = read{payload, ok}
		return payload, ok, nil
	}
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
// which read the store); nil when keys involve no file.
func StoreCoverage(s *lmdbstore.Store, at lmdbstore.At, keys []string) (*records.Coverage, error) {
	var c records.Coverage
	err := s.View(func(r *lmdbstore.ReadTxn) error {
		var err error
		c, err = Coverage(StorePayloads(r, at), keys)
		return err
	})
	if err != nil || c.Files == 0 {
		return nil, err
	}
	return &c, nil
}
