package ops

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/records"
)

// TestCoverage: the sums of a hand-made region (files by key and through
// their symbols' payloads, a syntax-only package named by a file and by a
// package node, payloads of other shapes, a key with no node), derived by
// hand; and every payload read once, though files are asked for by their
// key and again for their sums.
func TestCoverage(t *testing.T) {
	payloads := map[string]string{
		"file:a.go":   `{"path":"a.go","unresolved":3,"package":"m/a","terms":["x"]}`,
		"file:b.go":   `{"path":"b.go","unresolved":5,"mode":"syntax","package":"m/b"}`,
		"file:c.go":   `{"path":"c.go","unresolved":"many"}`, // not the ingest shape: no sums
		"file:d.go":   `[1,2]`,
		"sym:m/a.F":   `{"path":"a.go","line_start":1}`,
		"sym:m/b.G":   `{"path":"b.go"}`,
		"sym:m/e.H":   `{"path":"e.go"}`, // its file has no node
		"pkg:m/p":     `{"import_path":"m/p","mode":"syntax"}`,
		"decision:x":  `{"text":"no path"}`,
		"file:empty":  ``,
		"sym:m/c.Odd": `{"path":3}`,
	}
	reads := map[string]int{}
	src := Payloads(func(key string) ([]byte, bool, error) {
		reads[key]++
		p, ok := payloads[key]
		return []byte(p), ok && p != "", nil
	})
	keys := []string{"file:a.go", "sym:m/a.F", "sym:m/b.G", "file:c.go", "file:d.go", "sym:m/e.H", "pkg:m/p", "decision:x", "file:missing.go", "file:empty", "sym:m/c.Odd"}
	got, err := Coverage(src, keys)
	if err != nil {
		t.Fatal(err)
	}
	// Files: a.go, b.go (through sym:m/b.G), c.go, d.go, e.go. Sums: a.go
	// 3, b.go 5 (syntax, package m/b); c.go's "many" is not a count; d.go
	// is no object; e.go has no node. Syntax only: m/b (b.go), m/p.
	want := records.Coverage{Files: 5, Unresolved: 8, SyntaxOnly: []string{"m/b", "m/p"}, UnresolvedFiles: []string{"b.go", "a.go"}, Partial: true}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("coverage (-want +got):\n%s", d)
	}
	for k, n := range reads {
		if n != 1 {
			t.Errorf("%s read %d times", k, n)
		}
	}
	if len(reads) != len(keys)+2 { // and file:b.go, file:e.go
		t.Errorf("read %d keys, want %d: %v", len(reads), len(keys)+2, reads)
	}
}

// TestStoreCoverageMemo: StoreCoverage with a memo answers as without one
// (and as derived by hand) at the latest revision, after a write that
// changes a file's sums, and at the older revision again: the memo keeps
// one revision's facts and starts over at another.
func TestStoreCoverageMemo(t *testing.T) {
	s, err := lmdbstore.Init(filepath.Join(t.TempDir(), "db"), lmdbstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	write := func(unresolved int) {
		t.Helper()
		_, err := s.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
			for _, n := range []lmdbstore.NodePut{
				{Key: "file:a.go", Payload: json.RawMessage(fmt.Sprintf(`{"path":"a.go","unresolved":%d}`, unresolved))},
				{Key: "sym:m.F", Payload: json.RawMessage(`{"path":"a.go"}`)},
			} {
				if err := tx.PutNode(n); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var memo CoverageMemo
	keys := []string{"sym:m.F"}
	check := func(at lmdbstore.At, unresolved int) {
		t.Helper()
		want := &records.Coverage{Files: 1, Unresolved: unresolved, UnresolvedFiles: []string{"a.go"}, Partial: true}
		for _, m := range []*CoverageMemo{nil, &memo, &memo} { // the second memo call answers from it
			got, err := StoreCoverage(s, at, keys, m)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("at %+v, memo %v: (-want +got):\n%s", at, m != nil, d)
			}
		}
	}
	write(2)
	check(lmdbstore.At{}, 2)
	write(7)
	check(lmdbstore.At{}, 7)
	check(lmdbstore.AtRevision(1), 2)
	check(lmdbstore.At{}, 7)
}

// TestFactsOfOneDecode: factsOf, which decodes a payload once when it can,
// reads what decoding the place and the sums apart reads (factsApart, the
// way it was written first), on payloads of every shape:
// the ingest's, fields of the wrong type in either part, nulls, duplicate
// members, bad JSON, and random mixtures of those members.
func TestFactsOfOneDecode(t *testing.T) {
	payloads := []string{
		`{"path":"net/http/server.go","unresolved":3,"mode":"types","package":"net/http","terms":{"serve":4}}`,
		`{"import_path":"net/http","mode":"syntax"}`,
		`{"path":7,"unresolved":2}`, `{"path":"a.go","unresolved":"2"}`, `{"mode":1,"package":"p"}`,
		`{"path":null,"unresolved":null}`, `{"path":"a","path":"b","unresolved":1,"unresolved":2}`,
		`{"path":"a.go",`, `[]`, `"x"`, `{}`, `{"package":["p"],"import_path":"q"}`, `{"unresolved":1.5,"path":"x"}`,
	}
	members := []string{`"path":"p.go"`, `"path":3`, `"import_path":"ip"`, `"import_path":{}`, `"mode":"m"`, `"mode":false`,
		`"unresolved":4`, `"unresolved":"4"`, `"unresolved":-1`, `"package":"pk"`, `"package":9`, `"terms":{"a":1}`, `"x":[1,2]`}
	rng := rand.New(rand.NewPCG(9, 10))
	for range 2000 {
		var ms []string
		for range rng.IntN(6) {
			ms = append(ms, members[rng.IntN(len(members))])
		}
		payloads = append(payloads, "{"+strings.Join(ms, ",")+"}")
	}
	for _, p := range payloads {
		if got, want := factsOf([]byte(p), true), factsApart([]byte(p)); got != want {
			t.Fatalf("factsOf(%s) = %+v, want %+v", p, got, want)
		}
	}
	if factsOf([]byte(`{"path":"a"}`), false) != (payloadFacts{}) {
		t.Error("factsOf of no payload is not empty")
	}
}
