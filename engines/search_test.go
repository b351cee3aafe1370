package engines

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memctl/memctl/snapshot"
)

// indexed writes g with the search sections (and kv) and mounts it.
func indexed(t *testing.T, g testGraph, kv []KVEntry) (*Engine, []byte) {
	t.Helper()
	b := snapshotBytes(t, g, snapshot.WriterOptions{Extra: func(f *snapshot.File) ([]snapshot.ExtraSection, error) {
		return IndexSections(f, kv)
	}})
	e, err := engineFromBytes(t, b)
	if err != nil {
		t.Fatal(err)
	}
	return e, b
}

// randomLexGraph: n file nodes with random vocabularies over a small
// alphabet of terms (so they share terms), some without any.
func randomLexGraph(rng *rand.Rand, n int) testGraph {
	g := testGraph{rels: roleRels, types: map[int]string{}, payloads: map[int]string{}}
	for i := 0; i < n; i++ {
		g.keys = append(g.keys, fmt.Sprintf("file:f%03d.go", i))
		g.types[i] = "file"
		if rng.IntN(5) == 0 {
			continue
		}
		terms := map[string]int{}
		for range 1 + rng.IntN(12) {
			terms[fmt.Sprintf("t%02d", rng.IntN(30))] += 1 + rng.IntN(4)
		}
		p, _ := json.Marshal(map[string]any{"terms": terms})
		g.payloads[i] = string(p)
	}
	return g
}

// TestLexiconMappedEqualsBuilt: the mapped lexicon sections give exactly
// (bit for bit) the ranking the lexicon built in memory gives, for every
// seed, on lexGraph and random graphs.
func TestLexiconMappedEqualsBuilt(t *testing.T) {
	graphs := []testGraph{lexGraph()}
	rng := rand.New(rand.NewPCG(11, 12))
	for range 10 {
		graphs = append(graphs, randomLexGraph(rng, 5+rng.IntN(60)))
	}
	for gi, g := range graphs {
		plain := buildEngine(t, g)
		mapped, _ := indexed(t, g, nil)
		lp, err := plain.Lexicon()
		if err != nil {
			t.Fatal(err)
		}
		lm, err := mapped.Lexicon()
		if err != nil {
			t.Fatal(err)
		}
		if lp.Mapped() || !lm.Mapped() {
			t.Fatalf("graph %d: mapped flags %v %v, want false true", gi, lp.Mapped(), lm.Mapped())
		}
		if lp.Len() != lm.Len() {
			t.Fatalf("graph %d: %d vs %d nodes with vocabularies", gi, lp.Len(), lm.Len())
		}
		for v := range g.keys {
			seeds := []Seed{{Node: uint32(v), Score: 1}, {Node: uint32((v + 1) % len(g.keys)), Score: 0.5}}
			if d := cmp.Diff(lp.Similar(seeds), lm.Similar(seeds)); d != "" {
				t.Fatalf("graph %d seed %d: built vs mapped (-built +mapped):\n%s", gi, v, d)
			}
		}
	}
}

// TestHistoryMappedEqualsBuilt: the node_history section gives the
// temporal term exactly what scanning the payloads gives.
func TestHistoryMappedEqualsBuilt(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	g := randomLexGraph(rng, 50)
	for i := range g.keys {
		if rng.IntN(3) == 0 {
			continue
		}
		day := 1 + rng.IntN(9) // equal days share a rank
		g.payloads[i] = fmt.Sprintf(`{"git":{"changes":%d,"last_change":"2026-11-0%dT00:00:00Z"}}`, rng.IntN(20), day)
	}
	plain, _ := buildEngine(t, g).History()
	mapped, _ := indexed(t, g, nil)
	if _, ok := mapped.graph.File().NodeHistory(); !ok {
		t.Fatal("no node_history section")
	}
	hm, err := mapped.History()
	if err != nil {
		t.Fatal(err)
	}
	if plain.Len() == 0 || plain.Len() != hm.Len() {
		t.Fatalf("%d vs %d nodes with history", plain.Len(), hm.Len())
	}
	for v := range g.keys {
		n := uint32(v)
		if plain.Recency(n) != hm.Recency(n) || plain.LastChange(n) != hm.LastChange(n) || plain.Changes(n) != hm.Changes(n) {
			t.Fatalf("node %d: built %v/%d/%d, mapped %v/%d/%d", v, plain.Recency(n), plain.LastChange(n), plain.Changes(n), hm.Recency(n), hm.LastChange(n), hm.Changes(n))
		}
	}
}

// TestIndexSectionsDeterministic: the same graph gives the same bytes.
func TestIndexSectionsDeterministic(t *testing.T) {
	g := randomLexGraph(rand.New(rand.NewPCG(1, 2)), 40)
	kv := []KVEntry{{Address: "kv:b/n/k", Payload: []byte(`{"v":"retry twice"}`)}, {Address: "kv:a/n/k", Payload: []byte(`"backoff"`)}}
	_, b1 := indexed(t, g, kv)
	_, b2 := indexed(t, g, []KVEntry{kv[1], kv[0]})
	if !bytes.Equal(b1, b2) {
		t.Fatal("two exports of one state differ")
	}
	f, err := snapshot.FromBytes(b1)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Verify(); err != nil {
		t.Fatalf("Verify: %v", err)
	}
}

// searchCorpus: five memory items and two kv entries whose words are
// plain (the tokenizer leaves them as they are), so BM25 can be computed
// by hand from the word lists below.
func searchCorpus() (testGraph, []KVEntry) {
	g := testGraph{
		keys:  []string{"decision:backoff", "constraint:budget", "note:misc", "decision:cache", "file:client.go"},
		rels:  defaultRels,
		types: map[int]string{0: "decision", 1: "constraint", 2: "note", 3: "decision", 4: "file"},
		payloads: map[int]string{
			0: `{"text":"retry with exponential backoff","why":"server overload"}`,
			1: `{"text":"retry budget limit","n":3}`,
			2: `{"observations":[{"text":"lunch menu","added":"2026"}]}`,
			3: `{"text":"cache invalidation"}`,
		},
	}
	kv := []KVEntry{
		{Address: "kv:repo/policy/http", Payload: []byte(`{"rule":"retry idempotent request"}`)},
		{Address: "kv:repo/policy/old", Payload: []byte(`{"rule":"retry forever"}`), Superseded: true},
	}
	return g, kv
}

// searchDocs are the documents' tokens as the index should see them
// (key words, type, payload string values; kv: address words, payload).
var searchDocs = [][]string{
	{"decision", "backoff", "decision", "retry", "exponential", "backoff", "server", "overload"},
	{"constraint", "budget", "constraint", "retry", "budget", "limit"},
	{"note", "misc", "note", "lunch", "menu"},
	{"decision", "cache", "decision", "cache", "invalidation"},
	{"file", "client", "go", "file"},
	{"kv", "repo", "policy", "http", "retry", "idempotent", "request"},
	{"kv", "repo", "policy", "old", "retry", "forever"},
}

// bm25ByHand is SPEC §8.7's formula over searchDocs.
func bm25ByHand(query []string) map[int]float64 {
	total := 0
	for _, d := range searchDocs {
		total += len(d)
	}
	n := float64(len(searchDocs))
	avg := float64(total) / n
	out := map[int]float64{}
	for _, q := range query {
		df := 0
		for _, d := range searchDocs {
			for _, w := range d {
				if w == q {
					df++
					break
				}
			}
		}
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
		for i, d := range searchDocs {
			tf := 0.0
			for _, w := range d {
				if w == q {
					tf++
				}
			}
			if tf > 0 {
				out[i] += idf * tf * 2.2 / (tf + 1.2*(0.25+0.75*float64(len(d))/avg))
			}
		}
	}
	return out
}

func TestBM25HandComputed(t *testing.T) {
	g, kv := searchCorpus()
	e, _ := indexed(t, g, kv)
	x, err := e.TextIndex()
	if err != nil {
		t.Fatal(err)
	}
	if !x.Mapped() || x.NumKV() != 2 {
		t.Fatalf("mapped %v, %d kv entries", x.Mapped(), x.NumKV())
	}
	for _, q := range []string{"What did we decide about retries?", "backoff budget", "cache", "nothing here"} {
		got, err := x.BM25(q)
		if err != nil {
			t.Fatal(err)
		}
		want := map[uint32]float64{}
		for d, s := range bm25ByHand(map[string][]string{
			"What did we decide about retries?": {"decide", "retry"},
			"backoff budget":                    {"backoff", "budget"},
			"cache":                             {"cache"},
			"nothing here":                      {"nothing"},
		}[q]) {
			want[uint32(d)] = s
		}
		if d := cmp.Diff(want, got, approx); d != "" {
			t.Errorf("BM25(%q) (-hand +index):\n%s", q, d)
		}
	}
}

func TestSearch(t *testing.T) {
	g, kv := searchCorpus()
	e, _ := indexed(t, g, kv)
	keys := func(hs []SearchHit) []string {
		var out []string
		for _, h := range hs {
			out = append(out, h.Key)
		}
		return out
	}
	// Text only: the superseded kv entry is hidden; by BM25 the short
	// documents with "retry" first.
	hits, err := e.Search("What did we decide about retries?", SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := bm25ByHand([]string{"decide", "retry"})
	if !(s[1] > s[5] && s[5] > s[0]) {
		t.Fatalf("fixture ranks %v", s)
	}
	want := []string{"constraint:budget", "kv:repo/policy/http", "decision:backoff"}
	if d := cmp.Diff(want, keys(hits)); d != "" {
		t.Errorf("hits (-want +got):\n%s", d)
	}
	if hits[0].Score != 1.0/61 || hits[0].TextRank != 1 || hits[0].KeyRank != 0 {
		t.Errorf("first hit %+v, want text rank 1 and score 1/61", hits[0])
	}
	// --all shows the superseded entry.
	hits, _ = e.Search("retry", SearchOptions{All: true})
	if len(hits) != 4 || !hits[3].Superseded && !hits[0].Superseded && !hits[1].Superseded && !hits[2].Superseded {
		t.Errorf("with All: %+v", hits)
	}
	// A type filter.
	hits, _ = e.Search("retry", SearchOptions{Types: []string{KVType}})
	if d := cmp.Diff([]string{"kv:repo/policy/http"}, keys(hits)); d != "" {
		t.Errorf("kv only (-want +got):\n%s", d)
	}
	// Key matching fuses: "decision:cache" is an exact key (key rank 1)
	// and the text's best for "cache"; "decision:backoff" shares the
	// prefix-free substring "decision:" only through the text.
	hits, _ = e.Search("decision:cache", SearchOptions{})
	if len(hits) == 0 || hits[0].Key != "decision:cache" || hits[0].KeyRank != 1 || hits[0].Match != MatchExact || hits[0].TextRank != 1 {
		t.Errorf("exact key: %+v", hits)
	}
	if hits[0].Score != 1.0/61+1.0/61 {
		t.Errorf("fused score %v, want 2/61", hits[0].Score)
	}
	// kv addresses match as keys too.
	hits, _ = e.Search("policy/http", SearchOptions{})
	if len(hits) == 0 || hits[0].Key != "kv:repo/policy/http" || hits[0].KeyRank != 1 {
		t.Errorf("kv address: %+v", hits)
	}
	if _, err := e.Search("  ", SearchOptions{}); !isInvalid(err) {
		t.Errorf("empty query: %v", err)
	}
}

// TestSearchWithoutSections: a snapshot without the search sections
// builds the index in memory (without kv entries) and answers the same
// for the nodes.
func TestSearchWithoutSections(t *testing.T) {
	g, kv := searchCorpus()
	plain := buildEngine(t, g)
	mapped, _ := indexed(t, g, kv)
	for _, q := range []string{"retry", "cache invalidation", "decision:backoff", "budget"} {
		a, err := plain.Search(q, SearchOptions{Types: []string{"decision", "constraint", "note", "file"}})
		if err != nil {
			t.Fatal(err)
		}
		b, err := mapped.Search(q, SearchOptions{Types: []string{"decision", "constraint", "note", "file"}})
		if err != nil {
			t.Fatal(err)
		}
		// Same items in the same order; BM25 values differ (the kv
		// documents change N and the average length).
		ka, kb := []string{}, []string{}
		for _, h := range a {
			ka = append(ka, h.Key)
		}
		for _, h := range b {
			kb = append(kb, h.Key)
		}
		if d := cmp.Diff(ka, kb); d != "" {
			t.Errorf("%q: in-memory vs mapped (-mem +mapped):\n%s", q, d)
		}
	}
	if x, _ := plain.TextIndex(); x.Mapped() {
		t.Error("plain snapshot: the index claims to be mapped")
	}
}

func TestEachJSONString(t *testing.T) {
	var got []string
	eachJSONString([]byte(`{"a":"x","b":["y\n\"z",{"c":"w"}],"d":1,"e" : "v","f":true}`), func(s string) { got = append(got, s) })
	if d := cmp.Diff([]string{"x", "y\n\"z", "w", "v"}, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
