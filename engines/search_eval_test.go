package engines

import (
	"bufio"
	"cmp"
	"encoding/json"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// The search evaluation (BENCHMARKS.md "Search quality"): 103 questions
// over 523 memory items of testdata/search (written by gen.py from the
// hand-written facts.py). Each question has one relevant item, worded
// differently from it. recall@5 = the share of questions whose item is
// among the first 5 answers.

type evalItem struct {
	Kind    string          `json:"kind"`
	Key     string          `json:"key"`
	Type    string          `json:"type"`
	Scope   string          `json:"scope"`
	NS      string          `json:"ns"`
	Payload json.RawMessage `json:"payload"`
}

type evalQuestion struct {
	Q        string   `json:"q"`
	Relevant []string `json:"relevant"`
}

func readJSONL[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// evalEngine builds the items into a snapshot with the search sections.
func evalEngine(t *testing.T) (*Engine, []evalItem, []evalQuestion) {
	items := readJSONL[evalItem](t, "../testdata/search/items.jsonl")
	qs := readJSONL[evalQuestion](t, "../testdata/search/questions.jsonl")
	g := testGraph{rels: defaultRels, types: map[int]string{}, payloads: map[int]string{}}
	var kv []KVEntry
	for _, it := range items {
		if it.Kind == "kv" {
			for _, part := range []string{it.Scope, it.NS, it.Key} {
				if strings.ContainsAny(part, "/%") {
					t.Fatalf("kv part %q needs escaping", part)
				}
			}
			kv = append(kv, KVEntry{Address: "kv:" + it.Scope + "/" + it.NS + "/" + it.Key, Payload: it.Payload})
			continue
		}
		g.types[len(g.keys)] = it.Type
		g.payloads[len(g.keys)] = string(it.Payload)
		g.keys = append(g.keys, it.Key)
	}
	e, _ := indexed(t, g, kv)
	return e, items, qs
}

// mcpSearch is the MCP `search` tool today (§8.1's cascade over keys):
// the queries' matches, best score first, then node index.
func mcpSearch(t *testing.T, e *Engine, queries []string) []string {
	_, ms, err := e.FindSeeds(queries, DefaultSeedParams())
	if err != nil {
		t.Fatal(err)
	}
	slices.SortStableFunc(ms, func(a, b SeedMatch) int {
		if a.Score != b.Score {
			return cmp.Compare(b.Score, a.Score)
		}
		return cmp.Compare(a.Node, b.Node)
	})
	var out []string
	for _, m := range ms {
		if k := keyOf(t, e, m.Node); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// referenceSearch is the reference memory server's search_nodes: the
// entities whose name, type or an observation contains the query
// (case-insensitive), by name. With words, an entity matching more of
// them comes first.
func referenceSearch(items []evalItem, words []string) []string {
	type hit struct {
		key string
		n   int
	}
	var hits []hit
	for _, it := range items {
		if it.Kind != "node" {
			continue
		}
		var p struct {
			Observations []struct {
				Text string `json:"text"`
			} `json:"observations"`
		}
		_ = json.Unmarshal(it.Payload, &p)
		text := []string{strings.ToLower(it.Key), strings.ToLower(it.Type)}
		for _, o := range p.Observations {
			text = append(text, strings.ToLower(o.Text))
		}
		n := 0
		for _, w := range words {
			for _, s := range text {
				if strings.Contains(s, strings.ToLower(w)) {
					n++
					break
				}
			}
		}
		if n > 0 {
			hits = append(hits, hit{it.Key, n})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int {
		if a.n != b.n {
			return cmp.Compare(b.n, a.n)
		}
		return strings.Compare(a.key, b.key)
	})
	var out []string
	for _, h := range hits {
		out = append(out, h.key)
	}
	return out
}

// contentWords are the question's words an agent would type as
// keywords: runs of letters of 3 or more, lower-cased, minus function
// words.
func contentWords(q string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) }) {
		if len(w) >= 3 && !evalStop[w] {
			out = append(out, w)
		}
	}
	return out
}

var evalStop = map[string]bool{}

func init() {
	for _, w := range strings.Fields("the and what did how why which who when where can does are was were for with from into our any new all its has have should must about right") {
		evalStop[w] = true
	}
}

func hitAt(got []string, relevant []string, k int) float64 {
	for i, g := range got {
		if i == k {
			break
		}
		if slices.Contains(relevant, g) {
			return 1
		}
	}
	return 0
}

// bootstrap is the mean of hits and its 95 % percentile interval over
// 2000 resamples of the questions (fixed seed).
func bootstrap(hits []float64) (mean, lo, hi float64) {
	rng := rand.New(rand.NewPCG(28, 27))
	for _, h := range hits {
		mean += h
	}
	mean /= float64(len(hits))
	var ms []float64
	for range 2000 {
		s := 0.0
		for range hits {
			s += hits[rng.IntN(len(hits))]
		}
		ms = append(ms, s/float64(len(hits)))
	}
	slices.Sort(ms)
	return mean, ms[49], ms[1949]
}

func TestSearchRecall(t *testing.T) {
	e, items, qs := evalEngine(t)
	if len(items) < 500 || len(qs) < 100 {
		t.Fatalf("%d items, %d questions: the set must keep >= 500 and >= 100", len(items), len(qs))
	}
	systems := []struct {
		name string
		run  func(q string) []string
	}{
		{"search (BM25 + keys, RRF)", func(q string) []string {
			hs, err := e.Search(q, SearchOptions{TopK: 5})
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, h := range hs {
				out = append(out, h.Key)
			}
			return out
		}},
		{"BM25 alone (NoKeys)", func(q string) []string {
			hs, err := e.Search(q, SearchOptions{TopK: 5, NoKeys: true})
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, h := range hs {
				out = append(out, h.Key)
			}
			return out
		}},
		{"MCP search, the question", func(q string) []string { return mcpSearch(t, e, []string{q}) }},
		{"MCP search, its content words", func(q string) []string {
			if ws := contentWords(q); len(ws) > 0 {
				return mcpSearch(t, e, ws)
			}
			return nil
		}},
		{"search_nodes, the question", func(q string) []string { return referenceSearch(items, []string{q}) }},
		{"search_nodes, its content words", func(q string) []string { return referenceSearch(items, contentWords(q)) }},
	}
	recall := make([]float64, len(systems))
	for si, s := range systems {
		hits := make([]float64, len(qs))
		for i, q := range qs {
			hits[i] = hitAt(s.run(q.Q), q.Relevant, 5)
		}
		m, lo, hi := bootstrap(hits)
		recall[si] = m
		t.Logf("recall@5 %-34s %.3f  [%.3f, %.3f]", s.name, m, lo, hi)
	}
	// Floor: set below the measured value (see BENCHMARKS.md).
	if recall[0] < searchRecallFloor {
		t.Errorf("search recall@5 %.3f below the floor %.2f", recall[0], searchRecallFloor)
	}
	for i := 2; i < len(recall); i++ {
		if recall[0] <= recall[i] {
			t.Errorf("search (%.3f) does not beat %s (%.3f)", recall[0], systems[i].name, recall[i])
		}
	}
}

// searchRecallFloor is below the measured 0.592 (95 % interval 0.495 to
// 0.689) by about the interval's half-width: the set is fixed, so any
// drop is a change of the tokenizer or the ranking, worth a look.
const searchRecallFloor = 0.50
