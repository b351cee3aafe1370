package engines

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/snapshot"
	"github.com/memctl/memctl/terms"
)

// Full-text search (SPEC.md §8.7): "what did we decide about retries?"
// finds the decision whose text says so, not only an item whose key has
// the word. Documents are the graph's nodes (key, type and every string
// value of the payload, observations included) and the kv entries the
// export holds (address — scope, namespace, key — and every string value
// of the payload); tokens are package terms' (identifiers split at case
// changes and separators, lower-cased, stop words out, light stemming).
// The text ranking is BM25; key matching (§8.1's cascade) is fused with it
// by reciprocal rank fusion.

// BM25 parameters: the values of Robertson and Zaragoza's survey and of
// Lucene's default, not fitted here.
const (
	BM25K1 = 1.2
	BM25B  = 0.75
	// DefaultSearchTop is how many hits Search returns by default.
	DefaultSearchTop = 10
	// KVType is the type a kv entry has in search results and filters.
	KVType = "kv"
)

// KVEntry is one kv entry an export holds, for the text index.
type KVEntry struct {
	Address             string // lmdbstore.KVAddress(scope, ns, key)
	Payload             []byte // JSON
	Superseded, Expired bool
}

// IndexSections is the exporter's hook for the search sections (SPEC.md
// §7.10.1): the lexicon, the node history and the text index (with kv, the store's kv
// entries at the exported state) over the finished core file f.
func IndexSections(f *snapshot.File, kv []KVEntry) ([]snapshot.ExtraSection, error) {
	return IndexSectionsFrom(f, kv, nil)
}

// IndexSectionsFrom is IndexSections with the text index built from b
// (BuildTextIndexFrom; nil: from scratch). The sections are the same.
func IndexSectionsFrom(f *snapshot.File, kv []KVEntry, b *TextIndexBase) ([]snapshot.ExtraSection, error) {
	e, err := New(csr.New(f))
	if err != nil {
		return nil, err
	}
	// The text index (the larger part) is built beside the lexicon and
	// the node history: all three read only the file.
	var x *snapshot.TextIndex
	wait := snapshot.Beside(func() (err error) { x, err = e.BuildTextIndexFrom(kv, b); return err })
	lex, err := e.BuildLexicon()
	var hist []snapshot.NodeHistory
	if err == nil {
		hist, err = e.BuildNodeHistory()
	}
	if werr := wait(); err == nil {
		err = werr
	}
	if err != nil {
		return nil, err
	}
	out := append(lex.Sections(), snapshot.NodeHistorySection(hist))
	return append(out, x.Sections()...), nil
}

// BuildTextIndex computes the text-index arrays over the graph's nodes
// and kv (sorted by address here; two entries with one address are an
// invalid argument). Missing nodes are not documents. Terms sorted by
// bytes, postings in document order: the same input gives the same bits.
func (e *Engine) BuildTextIndex(kv []KVEntry) (*snapshot.TextIndex, error) {
	return e.BuildTextIndexFrom(kv, nil)
}

// TextIndexBase is an earlier text index a new one takes documents from:
// Same[v] is the base's document for node v of the graph when v's key,
// type and payload are that document's (an export that took the node
// from the base file knows), NoBaseDoc when v is tokenized anew. Kv
// entries are always tokenized.
type TextIndexBase struct {
	Index *snapshot.TextIndex
	Same  []uint32
}

// NoBaseDoc marks a node TextIndexBase has no document for.
const NoBaseDoc = math.MaxUint32

// posting is one document's count of one token.
type posting struct{ doc, tf uint32 }

// BuildTextIndexFrom is BuildTextIndex taking the documents b names from
// b's index (nil: none): only the other nodes and the kv entries are
// tokenized, and each of b's terms' postings is renumbered and merged
// with the new documents' in document order. The arrays are the ones
// BuildTextIndex gives (documents are a pure function of key, type and
// payload), at a cost in b's postings instead of in tokenizing every
// payload.
func (e *Engine) BuildTextIndexFrom(kv []KVEntry, b *TextIndexBase) (*snapshot.TextIndex, error) {
	kv = slices.Clone(kv)
	slices.SortFunc(kv, func(a, b KVEntry) int { return strings.Compare(a.Address, b.Address) })
	for i := range kv {
		if kv[i].Address == "" || (i > 0 && kv[i].Address == kv[i-1].Address) {
			return nil, invalidf("kv entry address %q empty or repeated", kv[i].Address)
		}
	}
	n := e.numNodes
	x := &snapshot.TextIndex{DocLens: make([]uint32, n+len(kv)), KVFlags: make([]uint32, len(kv))}
	renumber, err := takeDocs(x, n, b)
	if err != nil {
		return nil, err
	}
	post := map[string][]posting{}
	var toks []string
	counts := map[string]uint32{}
	addDoc := func(doc uint32) {
		clear(counts)
		for _, t := range toks {
			counts[t]++
		}
		x.DocLens[doc] = uint32(min(len(toks), math.MaxUint32))
		for t, c := range counts {
			post[t] = append(post[t], posting{doc, c})
		}
	}
	for v := 0; v < n && e.graph != nil; v++ {
		if b != nil && b.Same[v] != NoBaseDoc {
			continue
		}
		node, err := e.graph.Node(csr.NodeIndex(v))
		if err != nil {
			return nil, err
		}
		if node.Missing {
			continue
		}
		toks = terms.Tokens(toks[:0], node.Key)
		toks = terms.Tokens(toks, node.Type)
		p, err := e.graph.Payload(csr.NodeIndex(v))
		if err != nil {
			return nil, err
		}
		eachJSONString(p, func(s string) { toks = terms.Tokens(toks, s) })
		addDoc(uint32(v))
	}
	x.KVOffsets = make([]uint64, 0, 2*len(kv)+1)
	for j, en := range kv {
		x.KVOffsets = append(x.KVOffsets, uint64(len(x.KVBytes)))
		x.KVBytes = append(x.KVBytes, en.Address...)
		x.KVOffsets = append(x.KVOffsets, uint64(len(x.KVBytes)))
		x.KVBytes = append(x.KVBytes, en.Payload...)
		if en.Superseded {
			x.KVFlags[j] |= snapshot.NodeFlagSuperseded
		}
		if en.Expired {
			x.KVFlags[j] |= snapshot.NodeFlagExpired
		}
		toks = terms.Tokens(toks[:0], en.Address)
		eachJSONString(en.Payload, func(s string) { toks = terms.Tokens(toks, s) })
		addDoc(uint32(n + j))
	}
	x.KVOffsets = append(x.KVOffsets, uint64(len(x.KVBytes)))
	list := make([]string, 0, len(post))
	for t := range post {
		list = append(list, t)
	}
	slices.Sort(list)
	var base *snapshot.TextIndex
	if b != nil {
		base = b.Index
	}
	if err := mergeTerms(x, list, post, base, renumber); err != nil {
		return nil, err
	}
	return x, nil
}

// eachJSONString calls fn with every string value of the JSON text p
// (object member names are not values), unescaped. p is valid JSON (the
// store and the snapshot reader guarantee it); anything else stops the
// walk quietly.
func eachJSONString(p []byte, fn func(string)) {
	for i := 0; i < len(p); i++ {
		if p[i] != '"' {
			continue
		}
		j, esc := i+1, false
		for j < len(p) && p[j] != '"' {
			if p[j] == '\\' {
				esc = true
				j++
			}
			j++
		}
		if j >= len(p) {
			return
		}
		k := j + 1
		for k < len(p) && (p[k] == ' ' || p[k] == '\t' || p[k] == '\n' || p[k] == '\r') {
			k++
		}
		if k < len(p) && p[k] == ':' {
			i = j // a member name
			continue
		}
		if esc {
			var s string
			if json.Unmarshal(p[i:j+1], &s) == nil {
				fn(s)
			}
		} else {
			fn(string(p[i+1 : j]))
		}
		i = j
	}
}

// TextIndex is the engine's full-text index: the snapshot's sections when
// it has them (mapped), else built once from the graph (without kv
// entries, which only an export from the store carries).
type TextIndex struct {
	x      *snapshot.TextIndex
	nodes  int     // documents 0..nodes-1 are nodes
	docs   int     // documents with at least one token
	avgLen float64 // their average length
	mapped bool
}

type textIndexOnce struct {
	once sync.Once
	x    *TextIndex
	err  error
}

// TextIndex returns the engine's full-text index (see the type).
func (e *Engine) TextIndex() (*TextIndex, error) {
	e.text.once.Do(func() {
		var x *snapshot.TextIndex
		mapped := false
		if e.graph != nil {
			x, mapped = e.graph.File().TextIndex()
		}
		if !mapped {
			if x, e.text.err = e.BuildTextIndex(nil); e.text.err != nil {
				return
			}
		}
		e.text.x, e.text.err = e.newTextIndex(x, mapped)
	})
	return e.text.x, e.text.err
}

func (e *Engine) newTextIndex(x *snapshot.TextIndex, mapped bool) (*TextIndex, error) {
	if len(x.DocLens) != e.numNodes+x.NumKV() {
		return nil, corruptf("text index has %d documents for %d nodes and %d kv entries", len(x.DocLens), e.numNodes, x.NumKV())
	}
	t := &TextIndex{x: x, nodes: e.numNodes, mapped: mapped}
	total := 0.0
	for _, l := range x.DocLens {
		if l > 0 {
			t.docs++
			total += float64(l)
		}
	}
	if t.docs > 0 {
		t.avgLen = total / float64(t.docs)
	}
	return t, nil
}

// Mapped reports whether the index is the snapshot's (not rebuilt).
func (t *TextIndex) Mapped() bool { return t != nil && t.mapped }

// NumKV is the number of kv entries indexed.
func (t *TextIndex) NumKV() int { return t.x.NumKV() }

// KV returns kv entry j's address, payload and status flags.
func (t *TextIndex) KV(j uint32) (addr string, payload []byte, superseded, expired bool, err error) {
	addr, payload, err = t.x.KV(j)
	if err != nil {
		return "", nil, false, false, err
	}
	fl := t.x.KVFlags[j]
	return addr, payload, fl&snapshot.NodeFlagSuperseded != 0, fl&snapshot.NodeFlagExpired != 0, nil
}

// BM25 scores the documents containing any token of query: the sum over
// the query's distinct tokens t of
//
//	idf(t) × tf × (k1 + 1) / (tf + k1 × (1 − b + b × len / avgLen))
//
// with idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5)), N the documents with
// at least one token, df those with t, len the document's token count and
// avgLen the average over the N. Token order decides the summation order
// (the query's, first occurrence), so the bits are reproducible. The
// result is by document; Score order is the caller's.
func (t *TextIndex) BM25(query string) (map[uint32]float64, error) {
	toks := terms.Tokens(nil, query)
	seen := map[string]bool{}
	acc := map[uint32]float64{}
	docs := uint32(len(t.x.DocLens))
	for _, tok := range toks {
		if seen[tok] {
			continue
		}
		seen[tok] = true
		id, ok, err := t.x.LookupTerm(tok)
		if err != nil {
			return nil, corruptf("text index: %v", err)
		}
		if !ok {
			continue
		}
		ds, tfs, err := t.x.Postings(id)
		if err != nil {
			return nil, corruptf("text index: %v", err)
		}
		df := float64(len(ds))
		idf := math.Log(1 + (float64(t.docs)-df+0.5)/(df+0.5))
		for i, d := range ds {
			if d >= docs {
				return nil, corruptf("text index: term %q lists document %d, beyond %d", tok, d, docs)
			}
			tf := float64(tfs[i])
			norm := BM25K1 * (1 - BM25B + BM25B*float64(t.x.DocLens[d])/t.avgLen)
			acc[d] += idf * tf * (BM25K1 + 1) / (tf + norm)
		}
	}
	return acc, nil
}

// SearchOptions configures Search.
type SearchOptions struct {
	// TopK is how many hits to return (0: DefaultSearchTop; < 0: all).
	TopK int
	// Types keeps only items of these node types (KVType: kv entries);
	// empty keeps every type.
	Types []string
	// All includes superseded and expired items (they exist only in
	// snapshots exported with them, SPEC.md §7.2); by default they are
	// hidden.
	All bool
	// NoKeys ranks by the text alone (no key matching, no fusion).
	NoKeys bool
	// K is the reciprocal-rank-fusion constant (0: DefaultLexicalK).
	K int
}

// SearchHit is one item Search found.
type SearchHit struct {
	Key  string // the node's key, or the kv entry's address
	Type string // the node's type; KVType for a kv entry
	// Node is the node's index (when !IsKV); KV the kv entry's number in
	// the text index (when IsKV).
	Node csr.NodeIndex
	KV   uint32
	IsKV bool
	// Score is the fusion score (the BM25 score with NoKeys).
	Score float64
	// TextScore is the BM25 score; TextRank and KeyRank the 1-based ranks
	// in the text and key lists (0: not in that list); Match is the key
	// match's kind when KeyRank > 0.
	TextScore         float64
	TextRank, KeyRank int
	Match             MatchKind
	// Superseded, Expired: the item's status (only with All).
	Superseded, Expired bool
}

// Search finds the memory items whose text or key matches query (SPEC.md
// §8.7): the BM25 ranking of the text index fused by reciprocal rank
// fusion with key matching (§8.1's cascade over node keys, plus kv
// addresses that contain the query, case-folded, as substring matches).
// Items are filtered (type, status) before ranking; missing nodes are not
// items (a missing node that is a kv entry's address is that entry).
func (e *Engine) Search(query string, opts SearchOptions) ([]SearchHit, error) {
	if strings.TrimSpace(query) == "" {
		return nil, invalidf("empty search query")
	}
	if opts.K == 0 {
		opts.K = DefaultLexicalK
	}
	if opts.K < 0 {
		return nil, invalidf("fusion k %d must be positive", opts.K)
	}
	if opts.TopK == 0 {
		opts.TopK = DefaultSearchTop
	}
	t, err := e.TextIndex()
	if err != nil {
		return nil, err
	}
	// doc → hit, filled lazily with the item's attributes.
	hits := map[uint32]*SearchHit{}
	item := func(doc uint32) (*SearchHit, bool, error) {
		if h, ok := hits[doc]; ok {
			return h, h != nil, nil
		}
		h, err := e.searchItem(t, doc)
		if err != nil {
			return nil, false, err
		}
		if h != nil && !opts.keeps(h) {
			h = nil
		}
		hits[doc] = h
		return h, h != nil, nil
	}
	// The text list.
	scores, err := t.BM25(query)
	if err != nil {
		return nil, err
	}
	var textList []Scored
	for d, s := range scores {
		if _, ok, err := item(d); err != nil {
			return nil, err
		} else if ok {
			textList = append(textList, Scored{Node: d, Score: s})
		}
	}
	slices.SortFunc(textList, func(a, b Scored) int {
		if a.Score != b.Score {
			return cmp.Compare(b.Score, a.Score)
		}
		return cmp.Compare(a.Node, b.Node)
	})
	for i, s := range textList {
		h := hits[s.Node]
		h.TextRank, h.TextScore = i+1, s.Score
	}
	// The key list.
	if !opts.NoKeys {
		keyList, err := e.keyMatches(t, query)
		if err != nil {
			return nil, err
		}
		rank := 0
		for _, m := range keyList {
			h, ok, err := item(m.doc)
			if err != nil {
				return nil, err
			}
			if !ok || h.KeyRank > 0 {
				continue
			}
			rank++
			h.KeyRank, h.Match = rank, m.kind
		}
	}
	var out []SearchHit
	for _, h := range hits {
		if h == nil || (h.TextRank == 0 && h.KeyRank == 0) {
			continue
		}
		if opts.NoKeys {
			h.Score = h.TextScore
		} else {
			if h.TextRank > 0 {
				h.Score += 1 / float64(opts.K+h.TextRank)
			}
			if h.KeyRank > 0 {
				h.Score += 1 / float64(opts.K+h.KeyRank)
			}
		}
		out = append(out, *h)
	}
	slices.SortFunc(out, func(a, b SearchHit) int {
		if a.Score != b.Score {
			return cmp.Compare(b.Score, a.Score)
		}
		if c := cmp.Compare(rankOrder(a.TextRank), rankOrder(b.TextRank)); c != 0 {
			return c
		}
		if c := cmp.Compare(rankOrder(a.KeyRank), rankOrder(b.KeyRank)); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	if opts.TopK > 0 && len(out) > opts.TopK {
		out = out[:opts.TopK]
	}
	return out, nil
}

func (o SearchOptions) keeps(h *SearchHit) bool {
	if !o.All && (h.Superseded || h.Expired) {
		return false
	}
	return len(o.Types) == 0 || slices.Contains(o.Types, h.Type)
}

// searchItem describes document doc; nil for a missing node (not an item).
func (e *Engine) searchItem(t *TextIndex, doc uint32) (*SearchHit, error) {
	if int(doc) < t.nodes {
		if e.graph == nil {
			return nil, nil
		}
		n, err := e.graph.Node(csr.NodeIndex(doc))
		if err != nil {
			return nil, err
		}
		if n.Missing {
			return nil, nil
		}
		return &SearchHit{Key: n.Key, Type: n.Type, Node: csr.NodeIndex(doc), Superseded: n.Superseded, Expired: n.Expired}, nil
	}
	j := doc - uint32(t.nodes)
	addr, _, sup, exp, err := t.KV(j)
	if err != nil {
		return nil, corruptf("text index: %v", err)
	}
	return &SearchHit{Key: addr, Type: KVType, KV: j, IsKV: true, Superseded: sup, Expired: exp}, nil
}

type keyMatch struct {
	doc   uint32
	kind  MatchKind
	score float64
}

// keyMatches is the key list: §8.1's cascade over node keys (a missing
// node whose key is an indexed kv address stands for that entry), then kv
// addresses containing the query (case-folded) as substring matches; by
// score descending, then document.
func (e *Engine) keyMatches(t *TextIndex, query string) ([]keyMatch, error) {
	var out []keyMatch
	if e.keys != nil {
		_, ms, err := e.FindSeeds([]string{query}, DefaultSeedParams())
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			doc := uint32(m.Node)
			if j, ok, err := t.kvByAddress(e, m.Node); err != nil {
				return nil, err
			} else if ok {
				doc = uint32(t.nodes) + j
			}
			out = append(out, keyMatch{doc, m.Kind, m.Score})
		}
	}
	q := strings.ToLower(query)
	for j := 0; j < t.NumKV(); j++ {
		addr, _, err := t.x.KV(uint32(j))
		if err != nil {
			return nil, corruptf("text index: %v", err)
		}
		if strings.Contains(strings.ToLower(addr), q) {
			out = append(out, keyMatch{uint32(t.nodes + j), MatchSubstring, SubstringScore})
		}
	}
	slices.SortStableFunc(out, func(a, b keyMatch) int {
		if a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		return cmp.Compare(a.doc, b.doc)
	})
	return out, nil
}

// kvByAddress maps a missing node whose key is an indexed kv address to
// the entry (binary search over the sorted addresses).
func (t *TextIndex) kvByAddress(e *Engine, n csr.NodeIndex) (uint32, bool, error) {
	if t.NumKV() == 0 || e.graph == nil {
		return 0, false, nil
	}
	node, err := e.graph.Node(n)
	if err != nil || !node.Missing {
		return 0, false, err
	}
	lo, hi := 0, t.NumKV()
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		addr, _, err := t.x.KV(uint32(mid))
		if err != nil {
			return 0, false, corruptf("text index: %v", err)
		}
		switch {
		case addr < node.Key:
			lo = mid + 1
		case addr > node.Key:
			hi = mid
		default:
			return uint32(mid), true, nil
		}
	}
	return 0, false, nil
}
