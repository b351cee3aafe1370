package eval

// eval graph (SPEC.md §11.3) scores a store's code graph against a SCIP
// index of the same tree: the index is the truth, computed by a compiler-
// grade indexer, never from the graph being scored. Functions are matched
// between the two by file and definition line (memctl's symbol payload
// path and line_start, §9.3; the line of the SCIP definition's name).

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/ingest/scip"
	"github.com/memctl/memctl/lmdbstore"
)

// Pair is one caller → callee (or type → interface) pair. Sides are
// memctl keys when matched, else the SCIP symbol (or file: key).
type Pair struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// PairScore compares the pairs SCIP sees with memctl's.
type PairScore struct {
	SCIP      int     `json:"scip"`   // distinct pairs in the index
	Memctl    int     `json:"memctl"` // distinct memctl pairs into matched targets
	Found     int     `json:"found"`  // in both
	Recall    float64 `json:"recall"`
	Precision float64 `json:"precision"`
	// Missed are SCIP pairs memctl lacks whose sides are both matched;
	// Unmatched those with a side that matches no memctl symbol (counted
	// as missed too).
	Missed    []Pair `json:"missed"`
	Unmatched []Pair `json:"unmatched"`
	Extra     []Pair `json:"extra"` // memctl pairs the index does not have
}

// GraphResult is the outcome of eval graph (SPEC.md §11.3, `--json`).
type GraphResult struct {
	Eval        string `json:"eval"`
	Dir         string `json:"dir"`
	Index       string `json:"index"`
	Tool        string `json:"tool"`
	ToolVersion string `json:"tool_version"`
	Documents   int    `json:"documents"`
	// Functions are the SCIP functions and methods; Matched those with a
	// memctl symbol.
	Functions int `json:"functions"`
	Matched   int `json:"matched"`
	// MemctlFunctions are memctl's func/method symbols in the index's
	// documents.
	MemctlFunctions int `json:"memctl_functions"`
	// UnmatchedSCIP are SCIP functions with no memctl symbol at their
	// file and line; UnmatchedMemctl memctl functions no SCIP definition
	// matched.
	UnmatchedSCIP   []string `json:"unmatched_scip"`
	UnmatchedMemctl []string `json:"unmatched_memctl"`
	// Callers are the pairs whose caller is a definition; ModuleCallers
	// those whose caller is a file (module-level code and, in SCIP,
	// import statements).
	Callers       PairScore `json:"callers"`
	ModuleCallers PairScore `json:"module_callers"`
	// Called counts SCIP functions with at least one caller; NoCallers
	// those of them memctl lists no caller for (unmatched included).
	Called     int       `json:"called"`
	NoCallers  int       `json:"no_callers"`
	NoCallerOf []string  `json:"no_caller_of"`
	Implements PairScore `json:"implements"`
	Seconds    float64   `json:"seconds"`
}

// NoCallersShare is NoCallers / Called (0 when nothing is called).
func (r *GraphResult) NoCallersShare() float64 { return ratio(r.NoCallers, r.Called) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Text is the summary of SPEC.md §11.3.
func (r *GraphResult) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "eval graph %s: %s %s, %d documents; %d functions in SCIP, %d matched (%d unmatched; %d memctl functions unmatched); %.2fs\n",
		r.Dir, r.Tool, r.ToolVersion, r.Documents, r.Functions, r.Matched, len(r.UnmatchedSCIP), len(r.UnmatchedMemctl), r.Seconds)
	c := r.Callers
	fmt.Fprintf(&b, "callers: recall %.4f (%d of %d SCIP pairs; %d missed with an unmatched side), precision %.4f (%d of %d memctl pairs)\n",
		c.Recall, c.Found, c.SCIP, len(c.Unmatched), c.Precision, c.Found, c.Memctl)
	mc := r.ModuleCallers
	fmt.Fprintf(&b, "module-level callers: recall %.4f (%d of %d), precision %.4f (%d of %d)\n",
		mc.Recall, mc.Found, mc.SCIP, mc.Precision, mc.Found, mc.Memctl)
	fmt.Fprintf(&b, "no callers in memctl: %d of %d functions SCIP sees called (%.1f%%)\n", r.NoCallers, r.Called, 100*r.NoCallersShare())
	m := r.Implements
	fmt.Fprintf(&b, "implements: recall %.4f (%d of %d; %d with an unmatched side), precision %.4f (%d of %d)",
		m.Recall, m.Found, m.SCIP, len(m.Unmatched), m.Precision, m.Found, m.Memctl)
	return b.String()
}

// GraphOptions configures eval graph.
type GraphOptions struct {
	Dir   string // for the report
	Index string // the SCIP index file
}

// Graph scores the code graph in s against a SCIP index.
func Graph(s *lmdbstore.Store, o GraphOptions) (*GraphResult, error) {
	start := time.Now()
	ix, err := scip.Load(o.Index)
	if err != nil {
		return nil, err
	}
	res := &GraphResult{Eval: "graph", Dir: o.Dir, Index: o.Index, Tool: ix.Tool, ToolVersion: ix.ToolVersion,
		Documents: len(ix.Documents), UnmatchedSCIP: []string{}, UnmatchedMemctl: []string{}, NoCallerOf: []string{}}
	inIndex := make(map[string]bool, len(ix.Documents))
	for _, d := range ix.Documents {
		inIndex[d.Path] = true
	}

	var cands []scip.Candidate
	var memFuncs []string
	memCalls := make(map[string]map[string]bool) // callee key → caller keys
	var memImpl []Pair
	err = s.View(func(r *lmdbstore.ReadTxn) error {
		if err := r.ScanNodes(lmdbstore.At{}, func(n lmdbstore.Node) error {
			if !strings.HasPrefix(n.Key, "sym:") {
				return nil
			}
			var p ingest.SymbolPayload
			if json.Unmarshal(n.Payload, &p) != nil || p.Path == "" {
				return nil
			}
			cands = append(cands, scip.Candidate{Key: n.Key, Name: p.Name, Path: p.Path, Start: p.LineStart, End: p.LineEnd})
			if (p.Kind == ingest.KindFunc || p.Kind == ingest.KindMethod) && inIndex[p.Path] {
				memFuncs = append(memFuncs, n.Key)
			}
			return nil
		}); err != nil {
			return err
		}
		rels := make(map[lmdbstore.RelID]string)
		for _, name := range []string{ingest.RelCalls, ingest.RelReferences, ingest.RelImplements} {
			rel, err := r.RelationByName(name)
			if errors.Is(err, lmdbstore.ErrUnknownRelation) || errors.Is(err, lmdbstore.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			rels[rel.ID] = name
		}
		keys := make(map[lmdbstore.NodeID]string)
		keyOf := func(id lmdbstore.NodeID) (string, error) {
			if k, ok := keys[id]; ok {
				return k, nil
			}
			k, err := r.KeyOf(id)
			keys[id] = k
			return k, err
		}
		return r.ScanEdges(lmdbstore.At{}, func(e lmdbstore.Edge) error {
			name, ok := rels[e.Rel]
			if !ok || e.Src == e.Dst {
				return nil
			}
			src, err := keyOf(e.Src)
			if err != nil {
				return err
			}
			dst, err := keyOf(e.Dst)
			if err != nil {
				return err
			}
			if name == ingest.RelImplements {
				memImpl = append(memImpl, Pair{src, dst})
				return nil
			}
			if memCalls[dst] == nil {
				memCalls[dst] = make(map[string]bool)
			}
			memCalls[dst][src] = true
			return nil
		})
	})
	if err != nil {
		return nil, err
	}

	// Match every SCIP definition that can be a caller or a callee.
	// A symbol defined more than once has each definition matched on its
	// own (atDef); match holds its first.
	match, atDef := scip.MatchDefs(ix, cands) // SCIP symbol → memctl key
	matchedMem := make(map[string]bool)
	for _, k := range atDef {
		matchedMem[k] = true
	}
	for _, sym := range scip.SortedSymbols(ix) {
		if scip.IsFuncSymbol(ix, sym) {
			res.Functions++
			if _, ok := match[sym]; ok {
				res.Matched++
			} else {
				res.UnmatchedSCIP = append(res.UnmatchedSCIP, sym)
			}
		}
	}
	res.MemctlFunctions = len(memFuncs)
	for _, key := range memFuncs {
		if !matchedMem[key] {
			res.UnmatchedMemctl = append(res.UnmatchedMemctl, key)
		}
	}
	slices.Sort(res.UnmatchedMemctl)

	// Caller pairs.
	callerKey := func(r scip.Ref) (string, bool) {
		if r.Caller == "" {
			return ingest.FileKey(r.Path), true
		}
		if d, ok := scip.Holding(ix.Defs[r.Caller], r); ok {
			if k, ok := atDef[scip.DefAt{Path: d.Path, Name: d.Range}]; ok {
				return k, true
			}
		}
		k, ok := match[r.Caller]
		if !ok {
			return r.Caller, false
		}
		return k, true
	}
	calleeKey := func(r scip.Ref) (string, bool) {
		if d, ok := scip.ScopeOf(ix.Defs[r.Symbol], ix.Defs[r.Caller], r); ok {
			if k, ok := atDef[scip.DefAt{Path: d.Path, Name: d.Range}]; ok {
				return k, true
			}
		}
		k, ok := match[r.Symbol]
		return k, ok
	}
	want := make(map[Pair]bool)
	unmatched := make(map[Pair]bool)
	called := make(map[string]bool) // SCIP function symbols with a caller
	for _, r := range ix.Refs {
		if !scip.IsFuncSymbol(ix, r.Symbol) || r.Caller == r.Symbol {
			continue
		}
		from, okFrom := callerKey(r)
		to, okTo := calleeKey(r)
		if !okTo {
			to = r.Symbol
		}
		if okFrom && okTo && from == to {
			continue
		}
		called[r.Symbol] = true
		if okFrom && okTo {
			want[Pair{from, to}] = true
		} else {
			unmatched[Pair{from, to}] = true
		}
	}
	got := make(map[Pair]bool)
	for sym, ds := range ix.Defs {
		if !scip.IsFuncSymbol(ix, sym) {
			continue
		}
		for _, d := range ds {
			to, ok := atDef[scip.DefAt{Path: d.Path, Name: d.Range}]
			if !ok {
				continue
			}
			for from := range memCalls[to] {
				got[Pair{from, to}] = true
			}
		}
	}
	// Module-level pairs (the file as caller) are scored apart: SCIP gives
	// import statements no role of their own, so there they mix imports
	// with module-level calls.
	isModule := func(p Pair) bool { return strings.HasPrefix(p.From, "file:") }
	res.Callers = score(filterPairs(want, isModule, false), filterPairs(unmatched, isModule, false), filterPairs(got, isModule, false))
	res.ModuleCallers = score(filterPairs(want, isModule, true), filterPairs(unmatched, isModule, true), filterPairs(got, isModule, true))
	for sym := range called {
		to, ok := match[sym]
		if !ok || len(memCalls[to]) == 0 {
			res.NoCallers++
			res.NoCallerOf = append(res.NoCallerOf, sym)
		}
	}
	res.Called = len(called)
	slices.Sort(res.NoCallerOf)

	// Implements pairs between types.
	wantImpl, unmatchedImpl, gotImpl := make(map[Pair]bool), make(map[Pair]bool), make(map[Pair]bool)
	for _, r := range ix.Implements {
		if !scip.IsTypeSymbol(ix, r.From) || !scip.IsTypeSymbol(ix, r.To) {
			continue
		}
		a, okA := match[r.From]
		b, okB := match[r.To]
		switch {
		case okA && okB && a != b:
			wantImpl[Pair{a, b}] = true
		case !okA || !okB:
			if !okA {
				a = r.From
			}
			if !okB {
				b = r.To
			}
			unmatchedImpl[Pair{a, b}] = true
		}
	}
	for _, p := range memImpl {
		if matchedMem[p.From] || matchedMem[p.To] {
			gotImpl[p] = true
		}
	}
	res.Implements = score(wantImpl, unmatchedImpl, gotImpl)
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// score compares wanted pairs (and those with an unmatched side, all
// missed) with memctl's.
func score(want, unmatched, got map[Pair]bool) PairScore {
	ps := PairScore{SCIP: len(want) + len(unmatched), Memctl: len(got), Missed: []Pair{}, Extra: []Pair{}, Unmatched: sortedPairs(unmatched)}
	for p := range want {
		if got[p] {
			ps.Found++
		} else {
			ps.Missed = append(ps.Missed, p)
		}
	}
	for p := range got {
		if !want[p] {
			ps.Extra = append(ps.Extra, p)
		}
	}
	sortPairs(ps.Missed)
	sortPairs(ps.Extra)
	ps.Recall, ps.Precision = ratio(ps.Found, ps.SCIP), ratio(ps.Found, ps.Memctl)
	return ps
}

// filterPairs keeps the pairs for which keep(p) == want.
func filterPairs(m map[Pair]bool, keep func(Pair) bool, want bool) map[Pair]bool {
	out := make(map[Pair]bool, len(m))
	for p := range m {
		if keep(p) == want {
			out[p] = true
		}
	}
	return out
}

func sortedPairs(m map[Pair]bool) []Pair {
	out := make([]Pair, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sortPairs(out)
	return out
}

func sortPairs(ps []Pair) {
	slices.SortFunc(ps, func(a, b Pair) int {
		if c := strings.Compare(a.From, b.From); c != 0 {
			return c
		}
		return strings.Compare(a.To, b.To)
	})
}
