package engines

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"
	"sync"
)

// DefaultLexicalK is the k of the reciprocal rank fusion that merges the
// related profile's activation ranking of files with their lexical
// similarity (SPEC.md §8.2.1): a file at rank r of a list gets 1/(k + r).
// 60 is the value the method was published with (Cormack, Clarke and
// Büttcher, SIGIR 2009), not one fitted here.
const DefaultLexicalK = 60

// Lexicon is the TF-IDF index of the vocabularies the graph's nodes carry
// (the "terms" field of ingest's file payloads, SPEC.md §9.3): a node's
// vector weighs term t by (1 + ln tf) × ln(N / df) over the N nodes with
// terms, scaled to unit length; two nodes' similarity is the cosine of
// their vectors. Nodes without terms are not in it.
type Lexicon struct {
	// postings[t] lists the nodes whose vector has term t, with the weight.
	postings [][]posting
	vecs     map[uint32][]posting // node → its vector (term ids in posting.node)
	docs     int
}

type posting struct {
	node uint32 // a node index, or a term id inside vecs
	w    float64
}

type lexiconOnce struct {
	once sync.Once
	l    *Lexicon
	err  error
}

// Lexicon reads the vocabularies of every node once per engine (it scans
// the payloads that have a "terms" field). An engine without node
// information has an empty lexicon.
func (e *Engine) Lexicon() (*Lexicon, error) {
	e.lexicon.once.Do(func() { e.lexicon.l, e.lexicon.err = e.readLexicon() })
	return e.lexicon.l, e.lexicon.err
}

func (e *Engine) readLexicon() (*Lexicon, error) {
	l := &Lexicon{vecs: map[uint32][]posting{}}
	termID := map[string]uint32{}
	var df []int
	tfs := map[uint32]map[uint32]int{}
	err := e.eachPayloadWith("terms", func(v uint32, p []byte) error {
		var payload struct {
			Terms map[string]int `json:"terms"`
		}
		if json.Unmarshal(p, &payload) != nil || len(payload.Terms) == 0 {
			return nil // not the ingest shape: no vocabulary, not damage
		}
		tf := make(map[uint32]int, len(payload.Terms))
		for t, c := range payload.Terms {
			if c <= 0 {
				continue
			}
			id, ok := termID[t]
			if !ok {
				id = uint32(len(df))
				termID[t] = id
				df = append(df, 0)
			}
			df[id]++
			tf[id] = c
		}
		if len(tf) > 0 {
			tfs[v] = tf
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	l.docs = len(tfs)
	l.postings = make([][]posting, len(df))
	nodes := make([]uint32, 0, len(tfs))
	for v := range tfs {
		nodes = append(nodes, v)
	}
	slices.Sort(nodes) // postings in node order: deterministic sums
	for _, v := range nodes {
		var vec []posting
		norm := 0.0
		for t, c := range tfs[v] {
			w := (1 + math.Log(float64(c))) * math.Log(float64(l.docs)/float64(df[t]))
			if w > 0 {
				vec = append(vec, posting{node: t, w: w})
				norm += w * w
			}
		}
		if norm == 0 {
			continue
		}
		norm = math.Sqrt(norm)
		slices.SortFunc(vec, func(a, b posting) int { return cmp.Compare(a.node, b.node) })
		for i := range vec {
			vec[i].w /= norm
			l.postings[vec[i].node] = append(l.postings[vec[i].node], posting{node: v, w: vec[i].w})
		}
		l.vecs[v] = vec
	}
	return l, nil
}

// Len is the number of nodes with a vocabulary.
func (l *Lexicon) Len() int {
	if l == nil {
		return 0
	}
	return len(l.vecs)
}

// Similar ranks the nodes with a vocabulary by the similarity of their
// vector to the seeds' (Σ seed score × seed vector): best first, ties by
// node index; only nodes with a similarity > 0, the seeds left out.
func (l *Lexicon) Similar(seeds []Seed) []Scored {
	if l.Len() == 0 {
		return nil
	}
	acc := map[uint32]float64{}
	isSeed := map[uint32]bool{}
	for _, sd := range seeds {
		isSeed[sd.Node] = true
		if !(sd.Score > 0) || !finite(sd.Score) {
			continue
		}
		for _, q := range l.vecs[sd.Node] {
			for _, p := range l.postings[q.node] {
				acc[p.node] += sd.Score * q.w * p.w
			}
		}
	}
	out := make([]Scored, 0, len(acc))
	for v, s := range acc {
		if s > 0 && !isSeed[v] {
			out = append(out, Scored{Node: v, Score: s})
		}
	}
	slices.SortFunc(out, func(a, b Scored) int {
		if a.Score != b.Score {
			return cmp.Compare(b.Score, a.Score)
		}
		return cmp.Compare(a.Node, b.Node)
	})
	return out
}
