package ops

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/secretscan"
	"github.com/memctl/memctl/storesnap"
)

// bulkInput is n random put_node and put_edge lines over a small key
// space (keys repeat, so some puts change nothing), with blank lines,
// payloads, weights, valid times and per-line provenance: more than two
// input chunks when n is large.
func bulkInput(rng *rand.Rand, n int) string {
	var b strings.Builder
	key := func() string {
		if rng.IntN(100) == 0 { // a key holding a secret (redacted where the store has a Redactor)
			return fmt.Sprintf("sym:ghp_R8kq2ZtW7vN3xLp9sQm4Yb6Hc1Fd5Gj0Ke%d", 10+rng.IntN(20))
		}
		return fmt.Sprintf("sym:pkg%d.F%d", rng.IntN(50), rng.IntN(200))
	}
	for i := range n {
		switch {
		case rng.IntN(50) == 0:
			b.WriteString("\n")
		case i < n/10 || rng.IntN(8) == 0:
			fmt.Fprintf(&b, `{"op":"put_node","key":%q,"type":"func"`, key())
			if rng.IntN(3) == 0 {
				fmt.Fprintf(&b, `,"payload":{"line":%d,"doc":"x\ty"}`, rng.IntN(9))
			}
			if rng.IntN(40) == 0 {
				b.WriteString(`,"valid_from":"2026-01-02T03:04:05Z"`)
			}
			if rng.IntN(5) == 0 {
				b.WriteString(`,"run_id":"r9"`)
			}
			b.WriteString("}\n")
		default:
			fmt.Fprintf(&b, `{"op":"put_edge","src":%q,"rel":%q,"dst":%q`, key(), []string{"calls", "imports", "defines"}[rng.IntN(3)], key())
			if rng.IntN(2) == 0 {
				fmt.Fprintf(&b, `,"weight":%g`, []float64{1, 0.5, 2}[rng.IntN(3)])
			}
			b.WriteString("}\n")
		}
	}
	return b.String()
}

// TestBulkBatchMatchesBatch: BulkBatch of an input (several chunks, with
// and without valid times, so both the fast and the replay path; stores
// with and without secret redaction, which BulkBatch's workers apply to
// keys) gives the store ParseBatch then Batch give: the same commit, line
// numbers and logical snapshot hash.
func TestBulkBatchMatchesBatch(t *testing.T) {
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 3))
		in := bulkInput(rng, 30000)
		if seed == 0 {
			in = strings.ReplaceAll(in, `,"valid_from":"2026-01-02T03:04:05Z"`, "") // the fast path
		}
		if len(in) < 2*bulkChunkBytes {
			t.Fatalf("input of %d bytes: fewer than three chunks", len(in))
		}
		meta := lmdbstore.WriteMeta{Scope: "repo", RunID: "r1"}
		plain, bulk := testStore(t), testStore(t)
		if seed%2 == 1 {
			plain, bulk = redactingStore(t), redactingStore(t)
		}
		ops, wantLines, err := ParseBatch(strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		c1, err := Batch(plain, meta, ops)
		if err != nil {
			t.Fatal(err)
		}
		var r io.Reader = strings.NewReader(in)
		if seed >= 2 { // a regular file: the load is sized from what is left of it
			path := filepath.Join(t.TempDir(), "in.jsonl")
			if err := os.WriteFile(path, []byte(in), 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			r = f
		}
		c2, lines, err := BulkBatch(bulk, meta, r)
		if err != nil {
			t.Fatal(err)
		}
		c2.Time = c1.Time // two stores, two clocks
		if c1 != c2 {
			t.Errorf("seed %d: Batch committed %+v, BulkBatch %+v", seed, c1, c2)
		}
		if d := cmp.Diff(wantLines, lines); d != "" {
			t.Errorf("seed %d: line numbers (-ParseBatch +BulkBatch):\n%s", seed, d)
		}
		h1, err := storesnap.LogicalHash(plain, lmdbstore.At{})
		if err != nil {
			t.Fatal(err)
		}
		h2, err := storesnap.LogicalHash(bulk, lmdbstore.At{})
		if err != nil {
			t.Fatal(err)
		}
		if h1 != h2 {
			t.Errorf("seed %d: logical hashes differ", seed)
		}
		if seed%2 == 1 && c1.Redacted == 0 {
			t.Errorf("seed %d: no secret redacted", seed)
		}
	}
}

// redactingStore is a store that redacts secrets as the CLI's do.
func redactingStore(t *testing.T) *lmdbstore.Store {
	t.Helper()
	s, err := lmdbstore.Init(filepath.Join(t.TempDir(), "db"), lmdbstore.Options{NoSync: true, Redactor: secretscan.Lazy{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestBulkBatchErrorPrecedence: the error reported is the one ParseBatch,
// then the bulkable check, then the load would report first, wherever in
// the input (and in which chunk) each lies; nothing is written.
func TestBulkBatchErrorPrecedence(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	good := bulkInput(rng, 20000) // several chunks
	goodLines := strings.Count(good, "\n")
	badRel := `{"op":"put_edge","src":"a:1","rel":"nope","dst":"a:2"}` + "\n"
	delNode := `{"op":"del_node","key":"a:1"}` + "\n"
	badLine := `{"op":"put_node","key":"a:1",}` + "\n"
	for _, tc := range []struct {
		name, in string
		check    func(err error, lines []int) bool
	}{
		{"bad line after a refused op and a del_node", badRel + delNode + good + badLine, func(err error, _ []int) bool {
			var le *LineError
			return errors.As(err, &le) && le.Line == goodLines+3
		}},
		{"del_node after a refused op", badRel + good + delNode, func(err error, lines []int) bool {
			var nb *NotBulkableError
			return errors.As(err, &nb) && nb.Op == "del_node" && lines[nb.Index] == goodLines+2
		}},
		{"refused op late in the input", good + badRel, func(err error, lines []int) bool {
			var be *BatchError
			return errors.As(err, &be) && be.Op == "put_edge" && lines[be.Index] == goodLines+1 && errors.Is(err, lmdbstore.ErrUnknownRelation)
		}},
		{"refused at commit (bad payload)", good + `{"op":"put_node","key":"a:2","payload":{"a":1,"a":2}}` + "\n", func(err error, lines []int) bool {
			var be *BatchError
			return errors.As(err, &be) && be.Op == "put_node" && lines[be.Index] == goodLines+1
		}},
	} {
		s := testStore(t)
		c, lines, err := BulkBatch(s, lmdbstore.WriteMeta{}, strings.NewReader(tc.in))
		if err == nil || !tc.check(err, lines) {
			t.Errorf("%s: commit %+v, error %v", tc.name, c, err)
		}
		if err := s.View(func(r *lmdbstore.ReadTxn) error {
			if r.Revision() != 0 {
				t.Errorf("%s: revision %d written", tc.name, r.Revision())
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestInputSize: what is left of a regular file, from where it is read;
// -1 for a pipe and for a reader that is not a file.
func TestInputSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(path, make([]byte, 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Read(make([]byte, 300)); err != nil {
		t.Fatal(err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	for _, tc := range []struct {
		in   io.Reader
		want int64
	}{{f, 700}, {pr, -1}, {strings.NewReader("x"), -1}} {
		if got := inputSize(tc.in); got != tc.want {
			t.Errorf("inputSize(%T) = %d, want %d", tc.in, got, tc.want)
		}
	}
}
