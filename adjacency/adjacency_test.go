package adjacency

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memctl/memctl/internal/testcmp"
)

func randomEntries(r *rand.Rand, n int) []Entry {
	var es []Entry
	for range n {
		e := Entry{
			Rel:    uint32(1 + r.IntN(4)),
			Peer:   r.Uint64() >> uint(r.IntN(64)),
			Rev:    uint64(1 + r.IntN(50)),
			Weight: 1,
		}
		if r.IntN(4) == 0 {
			e.Flags |= FlagTombstone
		}
		if r.IntN(3) == 0 {
			e.Weight = r.Float32() + 0.5
		}
		if r.IntN(3) == 0 && len(es) > 0 { // another version of an earlier edge
			p := es[r.IntN(len(es))]
			e.Rel, e.Peer = p.Rel, p.Peer
		}
		es = Insert(es, e)
	}
	return es
}

// canonical is what Decode returns for e: the weight flag reflects the weight.
func canonical(es []Entry) []Entry {
	out := make([]Entry, len(es))
	for i, e := range es {
		e.Flags &^= FlagWeight
		if e.Weight != 1 {
			e.Flags |= FlagWeight
		}
		out[i] = e
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 150 {
		es := randomEntries(r, r.IntN(200))
		if !sort.SliceIsSorted(es, func(a, b int) bool { return es[a].Less(es[b]) }) {
			t.Fatalf("Insert left entries unsorted")
		}
		b := Encode(nil, es)
		got, err := Decode(b, nil)
		if err != nil {
			t.Fatalf("case %d: Decode: %v", i, err)
		}
		if diff := cmp.Diff(canonical(es), got, cmpEmpty); diff != "" {
			t.Fatalf("case %d: round trip (-want +got):\n%s", i, diff)
		}
		if len(es) > 0 {
			if err := Verify(b); err != nil {
				t.Fatalf("case %d: Verify: %v", i, err)
			}
		}
	}
}

var cmpEmpty = cmp.Comparer(func(a, b []Entry) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return cmp.Equal([]Entry(a), []Entry(b))
})

func TestInsertReplacesSameRevision(t *testing.T) {
	es := Insert(nil, Entry{Rel: 1, Peer: 5, Rev: 3, Weight: 1})
	es = Insert(es, Entry{Rel: 1, Peer: 5, Rev: 3, Weight: 2})
	es = Insert(es, Entry{Rel: 1, Peer: 4, Rev: 9, Weight: 1})
	want := []Entry{{Rel: 1, Peer: 4, Rev: 9, Weight: 1}, {Rel: 1, Peer: 5, Rev: 3, Weight: 2}}
	if diff := cmp.Diff(want, es); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

// visibleModel is the plain definition of a view.
func visibleModel(es []Entry, view uint64) []Entry {
	latest := map[[2]uint64]Entry{}
	for _, e := range es {
		k := [2]uint64{uint64(e.Rel), e.Peer}
		if e.Rev <= view && e.Rev >= latest[k].Rev {
			latest[k] = e
		}
	}
	var out []Entry
	for _, e := range latest {
		if !e.Tombstone() {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Less(out[b]) })
	return out
}

func visible(es []Entry, view uint64) []Entry {
	v := Visible{View: view}
	var out []Entry
	for _, e := range es {
		if got, ok := v.Push(e); ok {
			out = append(out, got)
		}
	}
	if got, ok := v.Flush(); ok {
		out = append(out, got)
	}
	return out
}

// TestCompactPreservesViews: compaction at horizon h changes no view >= h,
// and Visible agrees with the model at every view.
func TestCompactPreservesViews(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 300 {
		es := randomEntries(r, r.IntN(150))
		h := uint64(r.IntN(55))
		compacted := Compact(append([]Entry(nil), es...), h)
		views := []uint64{0, h, h + 1, 52, uint64(r.IntN(53)), uint64(r.IntN(53))}
		if h > 0 {
			views = append(views, h-1)
		}
		for _, view := range views {
			want := visibleModel(es, view)
			if got := visible(es, view); !slices.Equal(want, got) {
				diff := cmp.Diff(want, got, cmpEmpty)
				t.Fatalf("case %d view %d: Visible (-want +got):\n%s", i, view, diff)
			}
			if got := VisibleIn(slices.Clone(es), view); !slices.Equal(want, got) {
				diff := cmp.Diff(want, got, cmpEmpty)
				t.Fatalf("case %d view %d: VisibleIn (-want +got):\n%s", i, view, diff)
			}
			if view >= h {
				if got := visible(compacted, view); !slices.Equal(want, got) {
					diff := cmp.Diff(want, got, cmpEmpty)
					t.Fatalf("case %d horizon %d view %d: compacted (-want +got):\n%s", i, h, view, diff)
				}
			}
		}
		// After compaction nothing at or below the horizon is dead.
		for j, e := range compacted {
			if e.Rev <= h && e.Tombstone() && (j+1 == len(compacted) || !compacted[j+1].SameEdge(e)) {
				t.Fatalf("case %d: tombstone %+v at or below horizon %d kept", i, e, h)
			}
		}
	}
}

func TestSplitPointKeepsEdgesWhole(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		es := randomEntries(r, 1+r.IntN(300))
		p := SplitPoint(es)
		if p == 0 {
			for _, e := range es {
				if !e.SameEdge(es[0]) {
					t.Fatalf("SplitPoint 0 but several edges")
				}
			}
			continue
		}
		if es[p].SameEdge(es[p-1]) {
			t.Fatalf("split inside an edge at %d", p)
		}
	}
}

func TestCorruptValuesAreErrors(t *testing.T) {
	good := Encode(nil, []Entry{{Rel: 1, Peer: 10, Rev: 1, Weight: 1}, {Rel: 2, Peer: 3, Rev: 2, Weight: 0.5}})
	cases := map[string][]byte{
		"empty":         {},
		"version":       append([]byte{9}, good[1:]...),
		"count too big": {Version, 100, 1, 1, 1, 0},
		"trailing":      append(append([]byte(nil), good...), 0),
		"truncated":     good[:len(good)-2],
		"rel zero":      {Version, 1, 0, 1, 1, 0},
		"unknown flags": {Version, 1, 1, 1, 1, 0x80},
		"out of order":  {Version, 2, 1, 5, 1, 0, 0, 0, 1, 0},
		"zero count":    {Version, 0},
	}
	for name, b := range cases {
		err := Verify(b)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: Verify = %v, want ErrCorrupt", name, err)
		}
	}
	// Every single-byte mutation either decodes or fails cleanly.
	for i := range good {
		for _, v := range []byte{0, 1, 0x7f, 0x80, 0xff} {
			b := append([]byte(nil), good...)
			b[i] = v
			_ = Verify(b)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(Encode(nil, []Entry{{Rel: 1, Peer: 10, Rev: 1, Weight: 1}, {Rel: 1, Peer: 12, Rev: 2, Flags: FlagTombstone, Weight: 3}}))
	f.Add([]byte{Version, 0})
	f.Fuzz(func(t *testing.T, raw []byte) {
		// raw as stored (almost always a checksum mismatch), and raw with a
		// valid trailer appended, so mutations reach the entry decoder
		sealed := binary.LittleEndian.AppendUint32(bytes.Clone(raw), crc32.Checksum(raw, castagnoli))
		for _, b := range [][]byte{raw, sealed} {
			checkCanonical(t, b)
			checkDecodeMatchesIterator(t, b)
		}
	})
}

// checkDecodeMatchesIterator: Decode (its own loop) returns what the
// Iterator yields, with the same error, and keeps what dst held.
func checkDecodeMatchesIterator(t *testing.T, b []byte) {
	t.Helper()
	var it Iterator
	it.Reset(b)
	want := []Entry{{Rel: 99}} // dst's earlier contents
	for it.Next() {
		want = append(want, it.Entry())
	}
	got, err := Decode(b, []Entry{{Rel: 99}})
	if fmt.Sprint(err) != fmt.Sprint(it.Err()) {
		t.Fatalf("Decode error %v, Iterator error %v", err, it.Err())
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateNaNs()); diff != "" {
		t.Fatalf("Decode and Iterator differ (-iterator +decode):\n%s", diff)
	}
}

// TestDecodeMatchesIterator runs checkDecodeMatchesIterator on valid
// chunks and on every single-byte mutation of them, resealed so the
// mutation reaches the entry decoder.
func TestDecodeMatchesIterator(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for i := range 60 {
		es := randomEntries(r, 1+r.IntN(20))
		for j := range es { // revisions of one, two and three bytes
			es[j].Rev *= []uint64{1, 97, 3001}[i%3]
		}
		good := Encode(nil, es)
		checkDecodeMatchesIterator(t, good)
		body := good[:len(good)-ChecksumLen]
		for i := range body {
			for _, v := range []byte{0, 1, 0x7f, 0x80, 0xff} {
				b := append([]byte(nil), body...)
				b[i] = v
				checkDecodeMatchesIterator(t, binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)))
			}
		}
	}
}

// checkCanonical asserts that a chunk value Decode accepts is exactly the
// encoding of what it decoded.
func checkCanonical(t *testing.T, b []byte) {
	t.Helper()
	es, err := Decode(b, nil)
	if err != nil {
		return
	}
	again := Encode(nil, es)
	if !bytes.Equal(again, b) {
		t.Fatalf("accepted a non-canonical encoding %x (canonical %x)", b, again)
	}
	es2, err := Decode(again, nil)
	if err != nil {
		t.Fatalf("re-encoded value does not decode: %v", err)
	}
	if diff := cmp.Diff(es, es2, testcmp.EquateEmpty(), cmpopts.EquateNaNs()); diff != "" {
		t.Fatalf("re-encode changed entries (-first +second):\n%s", diff)
	}
}

// benchChunk is a 128-entry chunk of one relation with random 64-bit
// peers (the deltas of hashed ids: 9-byte varints).
func benchChunk() []byte {
	r := rand.New(rand.NewPCG(1, 1))
	var es []Entry
	for i := range 128 {
		es = append(es, Entry{Rel: 3, Peer: r.Uint64(), Rev: uint64(1 + i), Weight: 1})
	}
	sort.Slice(es, func(i, j int) bool { return es[i].Less(es[j]) })
	return Encode(nil, es)
}

func BenchmarkIterate(b *testing.B) {
	v := benchChunk()
	b.SetBytes(int64(len(v)))
	cpu0 := processCPU()
	for b.Loop() {
		var it Iterator
		it.Reset(v)
		n := 0
		for it.Next() {
			n++
		}
		if n != 128 {
			b.Fatal(n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*128), "ns/entry")
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N*128), "cpu-ns/entry")
}

// processCPU is the process's CPU time: on a shared machine wall time
// mostly measures the other tenants.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var rewrite = flag.Bool("rewrite", false, "rewrite golden files in testdata")

// TestGoldenChunk pins the chunk encoding of SPEC.md §3 byte by byte.
func TestGoldenChunk(t *testing.T) {
	es := []Entry{
		{Rel: 1, Peer: 0x10, Rev: 1, Weight: 1},
		{Rel: 1, Peer: 0x10, Rev: 2, Flags: FlagTombstone, Weight: 1},
		{Rel: 1, Peer: 0x400, Rev: 3, Weight: 0.5},
		{Rel: 4, Peer: 0x842f9bd48fb14b81, Rev: 300, Weight: 1},
	}
	var buf strings.Builder
	fmt.Fprintf(&buf, "chunk %x\n", Encode(nil, es))
	for i := range es {
		one := Encode(nil, es[:i+1])
		prev := Encode(nil, es[:i])
		// the entry's own bytes: the suffix after the previous entries,
		// both without their checksum trailers
		fmt.Fprintf(&buf, "entry %d %+v: %x\n", i, es[i], one[len(prev)-ChecksumLen:len(one)-ChecksumLen])
	}
	whole := Encode(nil, es)
	fmt.Fprintf(&buf, "crc32c %x\n", whole[len(whole)-ChecksumLen:])
	path := filepath.Join("..", "testdata", "adjacency", "chunk.golden")
	if *rewrite {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(buf.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -rewrite)", err)
	}
	if diff := cmp.Diff(string(want), buf.String()); diff != "" {
		t.Errorf("encoding changed (-golden +now):\n%s", diff)
	}
}

func TestUvarintAtMatchesStdlib(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for range 100000 {
		v := r.Uint64() >> uint(r.IntN(64))
		b := binary.AppendUvarint(nil, v)
		b = append(b, make([]byte, r.IntN(10))...)
		got, off := uvarintAt(b, 0)
		want, n := binary.Uvarint(b)
		if got != want || off != n {
			t.Fatalf("%x: got %d,%d want %d,%d", b, got, off, want, n)
		}
	}
	// Every length from 1 to 10 bytes, at the edges of each, followed by
	// 0 to 10 bytes (so both the one-load path and the byte-wise one see
	// each length).
	for n := 1; n <= 10; n++ {
		lo := uint64(1) << (7 * (n - 1))
		hi := uint64(1)<<(7*n) - 1
		if n == 1 {
			lo = 0
		}
		if n == 10 {
			hi = math.MaxUint64
		}
		for _, v := range []uint64{lo, lo + 1, hi - 1, hi} {
			for pad := range 11 {
				b := append(binary.AppendUvarint(nil, v), make([]byte, pad)...)
				for i := len(b) - pad; i < len(b); i++ {
					b[i] = 0xff
				}
				if got, off := uvarintAt(b, 0); got != v || off != n {
					t.Fatalf("%x: got %d,%d want %d,%d", b, got, off, v, n)
				}
			}
		}
	}
	// overlong, overflowing and truncated encodings fail (binary.Uvarint
	// fails on the last two and accepts overlong ones, which are not
	// canonical), whatever follows them
	cont8 := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	bad := func(b []byte, what string) {
		t.Helper()
		if _, off := uvarintAt(b, 0); off != -1 {
			t.Errorf("%s %x decoded", what, b)
		}
	}
	for _, b := range [][]byte{{}, {0x80}, {0xff, 0xff}, slices.Clone(cont8), append(slices.Clone(cont8), 0x80)} {
		bad(b, "truncated")
	}
	for _, b := range [][]byte{
		{0x80, 0x00}, {0xff, 0x80, 0x00},
		append(slices.Clone(cont8), 0x00),       // 9 bytes
		append(slices.Clone(cont8), 0x80, 0x00), // 10 bytes
	} {
		for pad := range 9 { // whatever follows
			bad(append(slices.Clone(b), bytes.Repeat([]byte{0x05}, pad)...), "overlong")
		}
	}
	for _, b := range [][]byte{
		append(slices.Clone(cont8), 0x80, 0x02),
		append(slices.Clone(cont8), 0xff, 0x81, 0x01), // continues past 10 bytes
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
	} {
		for pad := range 9 {
			bad(append(slices.Clone(b), bytes.Repeat([]byte{0x05}, pad)...), "overflowing")
		}
	}
}

// BenchmarkDecodeVisible is what a scan does with a chunk: decode every
// entry, then keep what the latest view sees.
func BenchmarkDecodeVisible(b *testing.B) {
	v := benchChunk()
	b.SetBytes(int64(len(v)))
	var dst []Entry
	cpu0 := processCPU()
	for b.Loop() {
		var err error
		dst, err = Decode(v, dst[:0])
		if err != nil {
			b.Fatal(err)
		}
		if n := len(VisibleIn(dst, math.MaxUint64)); n != 128 {
			b.Fatal(n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*128), "ns/entry")
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N*128), "cpu-ns/entry")
}
