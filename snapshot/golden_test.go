package snapshot_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/snapshot"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files in testdata/snapshot")

const goldenDir = "../testdata/snapshot"

// dump renders a snapshot as an annotated hex listing: header, then each
// section with its kind, offset and length, then the directory. A format
// change shows up as a readable diff of tiny.hex.
func dump(b []byte) string {
	var sb strings.Builder
	hexLines := func(off, end int) {
		for o := off; o < end; o += 16 {
			e := min(o+16, end)
			fmt.Fprintf(&sb, "  %06x ", o)
			for i := o; i < o+16; i++ {
				if i < e {
					fmt.Fprintf(&sb, " %02x", b[i])
				} else {
					sb.WriteString("   ")
				}
			}
			sb.WriteString("  |")
			for i := o; i < e; i++ {
				c := b[i]
				if c < 0x20 || c > 0x7e {
					c = '.'
				}
				sb.WriteByte(c)
			}
			sb.WriteString("|\n")
		}
	}
	f, err := snapshot.FromBytes(b)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	h := f.Header()
	fmt.Fprintf(&sb, "header: format %s flags %#x revision %d commit_time %d nodes %d edges %d strings %d relations %d sections %d dir_offset %d file_length %d\n",
		h.Version, h.Flags, h.Revision, h.CommitTime, h.NodeCount, h.EdgeCount, h.StringCount, h.RelationCount, h.SectionCount, h.DirOffset, h.FileLength)
	hexLines(0, snapshot.HeaderSize)
	for _, s := range f.Sections() {
		fmt.Fprintf(&sb, "section %s (kind %d, flags %d): offset %d length %d crc %08x\n", s.Kind, s.Kind, s.Flags, s.Offset, s.Length, s.CRC)
		hexLines(int(s.Offset), int(s.Offset+s.Length))
	}
	fmt.Fprintf(&sb, "directory: offset %d, %d entries of %d bytes\n", h.DirOffset, h.SectionCount, snapshot.DirEntrySize)
	hexLines(int(h.DirOffset), len(b))
	return sb.String()
}

func TestGolden(t *testing.T) {
	b := mustWrite(t, tinyState(), snapshot.WriterOptions{})
	files := map[string][]byte{"tiny.snap": b, "tiny.hex": []byte(dump(b))}
	if *rewrite {
		if err := os.MkdirAll(goldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(goldenDir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, data := range files {
		want, err := os.ReadFile(filepath.Join(goldenDir, name))
		if err != nil {
			t.Fatalf("%v (run with -rewrite to create)", err)
		}
		if !bytes.Equal(data, want) {
			t.Errorf("%s differs from the golden file; a format change must bump the version and rewrite it on purpose (-rewrite)\n%s", name, dump(b))
		}
	}
	checkAgainstModel(t, tinyState(), mustGraph(t, b), false)
}

// searchState is tinyState with file vocabularies on two nodes, the
// input of the search golden file.
func searchState() *snapshot.MemState {
	st := tinyState()
	for i := range st.NodeList {
		switch st.NodeList[i].Key {
		case "file:main.go":
			st.NodeList[i].Payload = []byte(`{"lines":120,"terms":{"main":2,"run":1}}`)
		case "sym:main.run":
			st.NodeList[i].Payload = []byte(`{"kind":"func","doc":"runs the retry loop","terms":{"retry":3,"run":1},"git":{"changes":4,"last_change":"2026-11-20T10:00:00Z"}}`)
		}
	}
	return st
}

// searchKV is the kv entry of the search golden file.
var searchKV = []engines.KVEntry{{Address: "kv:repo/notes/retry", Payload: []byte(`{"text":"Retries back off exponentially"}`)}}

// TestGoldenSearch pins the search sections (format 3.1, SPEC §7.10.1):
// tiny-search.snap is searchState exported with engines.IndexSections,
// tiny-search.hex its annotated dump.
func TestGoldenSearch(t *testing.T) {
	b := mustWrite(t, searchState(), snapshot.WriterOptions{Extra: func(f *snapshot.File) ([]snapshot.ExtraSection, error) {
		return engines.IndexSections(f, searchKV)
	}})
	files := map[string][]byte{"tiny-search.snap": b, "tiny-search.hex": []byte(dump(b))}
	for name, data := range files {
		if *rewrite {
			if err := os.WriteFile(filepath.Join(goldenDir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(filepath.Join(goldenDir, name))
		if err != nil {
			t.Fatalf("%v (run with -rewrite to create)", err)
		}
		if !bytes.Equal(data, want) {
			t.Errorf("%s differs from the golden file; a format change must bump the version and rewrite it on purpose (-rewrite)", name)
		}
	}
	f, err := snapshot.FromBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Verify(); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.Lexicon(); !ok {
		t.Error("no lexicon group")
	}
	x, ok := f.TextIndex()
	if !ok || x.NumKV() != 1 {
		t.Fatal("no text index with the kv entry")
	}
	if addr, p, err := x.KV(0); err != nil || addr != searchKV[0].Address || string(p) != string(searchKV[0].Payload) {
		t.Errorf("kv entry: %q %s %v", addr, p, err)
	}
	// Every section of the group is required with the others: drop one
	// from the directory and Open names the group.
	if _, err := snapshot.FromBytes(withoutSection(t, b, snapshot.KindTextPostTFs)); !errors.Is(err, snapshot.ErrCorrupt) || !strings.Contains(err.Error(), "search group") {
		t.Errorf("incomplete group: %v", err)
	}
}

// withoutSection removes kind k's directory entry (the bytes stay; the
// previous section is lengthened over them so the layout stays canonical).
func withoutSection(t *testing.T, orig []byte, k snapshot.Kind) []byte {
	t.Helper()
	b := bytes.Clone(orig)
	le := binary.LittleEndian
	dirOff, count := le.Uint64(b[64:]), int(le.Uint32(b[60:]))
	var dir [][]byte
	for i := 0; i < count; i++ {
		dir = append(dir, bytes.Clone(b[dirOff+uint64(i*snapshot.DirEntrySize):][:snapshot.DirEntrySize]))
	}
	for i, e := range dir {
		if snapshot.Kind(le.Uint16(e)) != k {
			continue
		}
		if i+1 < len(dir) {
			t.Fatalf("%s is not the last section", k)
		}
		prev := dir[i-1]
		le.PutUint64(prev[16:], le.Uint64(e[8:])+le.Uint64(e[16:])-le.Uint64(prev[8:]))
		dir = dir[:i]
	}
	out := b[:dirOff]
	for _, e := range dir {
		out = append(out, e...)
	}
	le.PutUint32(out[60:], uint32(len(dir)))
	le.PutUint64(out[72:], uint64(len(out)))
	refreshCRCs(out)
	return out
}

// touchAll calls every accessor over every index, ignoring errors: on a
// damaged file it must not panic.
func touchAll(f *snapshot.File) {
	g := csr.New(f)
	n := uint32(g.NumNodes())
	for i := uint32(0); i <= n; i++ {
		_, _ = g.Node(i)
		_, _ = g.Payload(i)
		tg, rels, _, _ := g.Out(i)
		for k := range tg {
			_ = g.CheckIndex(tg[k])
			_, _ = g.Key(tg[k])
			_, _ = g.Relation(rels[k])
		}
		srcs, rels, _, _ := g.In(i)
		for k := range srcs {
			_, _, _ = g.EdgeRev(srcs[k], rels[k], i)
		}
		_, _ = g.OutRevs(i)
		_, _ = g.OutDegree(i)
		_, _ = g.InDegree(i)
		_, _ = g.NodeID(i)
		_, _ = g.Type(i)
	}
	_, _ = g.NodesOfType("file")
	_, _, _ = g.LookupKey("file:main.go")
	_, _, _ = g.PrefixRange("sym:")
	_, _ = g.TrigramPostings([3]byte{'m', 'a', 'i'})
	_, _ = g.Relations()
	_, _ = f.LogicalHash()
	_, _, _ = g.PageRank()
	touchSearch(f)
}

// touchSearch calls the search sections' accessors and the engines'
// readers of them over every index, ignoring errors.
func touchSearch(f *snapshot.File) {
	n := uint32(f.NumNodes())
	if l, ok := f.Lexicon(); ok {
		for i := uint32(0); i <= n; i++ {
			_, _, _ = l.Vector(i)
		}
		for t := uint32(0); t <= uint32(l.NumTerms()); t++ {
			_, _, _ = l.Postings(t)
		}
	}
	if x, ok := f.TextIndex(); ok {
		for j := uint32(0); j <= uint32(x.NumKV()); j++ {
			_, _, _ = x.KV(j)
		}
		for t := uint32(0); t <= uint32(x.NumTerms()); t++ {
			_, _ = x.Term(t)
			_, _, _ = x.Postings(t)
		}
		_, _, _ = x.LookupTerm("retry")
	}
	if e, err := engines.New(csr.New(f)); err == nil {
		if lex, err := e.Lexicon(); err == nil {
			for i := uint32(0); i < n; i++ {
				_ = lex.Similar([]engines.Seed{{Node: i, Score: 1}})
			}
		}
		_, _ = e.Search("retry main", engines.SearchOptions{All: true})
		_, _ = e.Search("kv:repo", engines.SearchOptions{All: true})
	}
}

func goldenBytes(t *testing.T) []byte {
	b, err := os.ReadFile(filepath.Join(goldenDir, "tiny.snap"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func openAndVerify(b []byte) error {
	f, err := snapshot.FromBytes(b)
	if err != nil {
		return err
	}
	touchAll(f)
	return f.Verify()
}

func TestEverySingleByteFlipIsCaught(t *testing.T) {
	for _, name := range []string{"tiny.snap", "tiny-search.snap"} {
		orig, err := os.ReadFile(filepath.Join(goldenDir, name))
		if err != nil {
			t.Fatal(err)
		}
		everyByteFlipIsCaught(t, orig)
	}
}

func everyByteFlipIsCaught(t *testing.T, orig []byte) {
	flips := []byte{0x01, 0x80, 0xff}
	if raceEnabled {
		flips = flips[1:2] // every byte, one flip each: a third of the time
	}
	for i := range orig {
		for _, x := range flips {
			b := bytes.Clone(orig)
			b[i] ^= x
			err := openAndVerify(b)
			if err == nil {
				t.Fatalf("flip %#x at offset %d not caught", x, i)
			}
			if !errors.Is(err, snapshot.ErrCorrupt) && !errors.Is(err, snapshot.ErrNewerVersion) && !errors.Is(err, snapshot.ErrUnsupported) {
				t.Fatalf("flip at %d: untyped error %v", i, err)
			}
		}
	}
}

func TestTruncationIsCaught(t *testing.T) {
	orig := mustWrite(t, randomState(rand.New(rand.NewPCG(7, 8)), 200, 800), snapshot.WriterOptions{})
	for n := 0; n < len(orig); n += 1 + n/50 {
		if err := openAndVerify(orig[:n]); !errors.Is(err, snapshot.ErrCorrupt) {
			t.Fatalf("truncation to %d bytes: err = %v", n, err)
		}
	}
	if err := openAndVerify(append(bytes.Clone(orig), 0)); !errors.Is(err, snapshot.ErrCorrupt) {
		t.Fatalf("one byte appended: err = %v", err)
	}
}

func TestRandomDamageIsCaught(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	orig := mustWrite(t, randomState(rng, 200, 800), snapshot.WriterOptions{})
	for iter := 0; iter < 300; iter++ {
		b := bytes.Clone(orig)
		for k := 1 + rng.IntN(8); k > 0; k-- {
			b[rng.IntN(len(b))] = byte(rng.Uint32())
		}
		if bytes.Equal(b, orig) {
			continue
		}
		if err := openAndVerify(b); !errors.Is(err, snapshot.ErrCorrupt) {
			t.Fatalf("iteration %d: err = %v", iter, err)
		}
	}
}

// refreshCRCs recomputes every section, directory and header CRC, so the
// damage reaches the structural checks (a hostile file, not an accident).
func refreshCRCs(b []byte) {
	le := binary.LittleEndian
	tab := crc32.MakeTable(crc32.Castagnoli)
	if len(b) < snapshot.HeaderSize {
		return
	}
	dirOff, count := le.Uint64(b[64:]), uint64(le.Uint32(b[60:]))
	if dirOff > uint64(len(b)) || count*snapshot.DirEntrySize != uint64(len(b))-dirOff {
		return
	}
	for i := uint64(0); i < count; i++ {
		e := b[dirOff+i*snapshot.DirEntrySize:]
		off, n := le.Uint64(e[8:]), le.Uint64(e[16:])
		if off <= uint64(len(b)) && n <= uint64(len(b))-off {
			le.PutUint32(e[4:], crc32.Checksum(b[off:off+n], tab))
		}
	}
	le.PutUint32(b[80:], crc32.Checksum(b[dirOff:], tab))
	le.PutUint32(b[124:], crc32.Checksum(b[:124], tab))
}

// TestHostileDamageNeverPanics damages section contents and fixes up the
// checksums, so Open succeeds and the accessors meet bad offsets and
// indices: they must return errors (or, for damage that happens to be
// valid, values), never panic; Verify must not panic either.
func TestHostileDamageNeverPanics(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	orig := mustWrite(t, randomState(rng, 60, 200), snapshot.WriterOptions{Extra: func(f *snapshot.File) ([]snapshot.ExtraSection, error) {
		return engines.IndexSections(f, searchKV) // the search sections are damaged too
	}})
	caught := 0
	iters := 600 // FuzzOpen explores the same space for longer
	if testing.Short() {
		iters = 100
	}
	for iter := 0; iter < iters; iter++ {
		b := bytes.Clone(orig)
		for k := 1 + rng.IntN(4); k > 0; k-- {
			i := snapshot.HeaderSize + rng.IntN(len(b)-snapshot.HeaderSize)
			b[i] = byte(rng.Uint32())
		}
		refreshCRCs(b)
		if err := openAndVerify(b); err != nil {
			caught++
		}
	}
	if caught == 0 {
		t.Fatal("no hostile damage was reported")
	}
}

func FuzzOpen(f *testing.F) {
	for _, name := range []string{"tiny.snap", "tiny-search.snap"} {
		if b, err := os.ReadFile(filepath.Join(goldenDir, name)); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		refreshCRCs(b)
		_ = openAndVerify(b)
	})
}

func TestVersions(t *testing.T) {
	orig := goldenBytes(t)
	setVersion := func(major, minor uint16) []byte {
		b := bytes.Clone(orig)
		binary.LittleEndian.PutUint16(b[8:], major)
		binary.LittleEndian.PutUint16(b[10:], minor)
		refreshCRCs(b)
		return b
	}
	_, err := snapshot.FromBytes(setVersion(4, 0))
	if !errors.Is(err, snapshot.ErrNewerVersion) {
		t.Fatalf("major 4: err = %v, want ErrNewerVersion", err)
	}
	var ve *snapshot.VersionError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "newer than this reader") {
		t.Fatalf("major 4: err = %v", err)
	}
	for _, major := range []uint16{0, 1, 2} {
		_, err := snapshot.FromBytes(setVersion(major, 0))
		if !errors.Is(err, snapshot.ErrUnsupported) || !strings.Contains(err.Error(), "export the store again") {
			t.Fatalf("major %d: err = %v, want ErrUnsupported with the remedy", major, err)
		}
	}
	f, err := snapshot.FromBytes(setVersion(3, 7))
	if err != nil {
		t.Fatalf("minor 7: %v", err)
	}
	if err := f.Verify(); err != nil {
		t.Fatalf("minor 7: %v", err)
	}
}

// withExtraSection appends a section of kind k and flags to the golden file
// (as a newer minor version's writer would).
func withExtraSection(t *testing.T, k snapshot.Kind, flags uint16) []byte {
	orig := goldenBytes(t)
	le := binary.LittleEndian
	dirOff, count := le.Uint64(orig[64:]), le.Uint32(orig[60:])
	body := bytes.Clone(orig[:dirOff])
	secOff := uint64(len(body))
	data := []byte("future section data")
	body = append(body, data...)
	for len(body)%snapshot.SectionAlign != 0 {
		body = append(body, 0)
	}
	newDir := uint64(len(body))
	body = append(body, orig[dirOff:]...)
	e := make([]byte, snapshot.DirEntrySize)
	le.PutUint16(e[0:], uint16(k))
	le.PutUint16(e[2:], flags)
	le.PutUint64(e[8:], secOff)
	le.PutUint64(e[16:], uint64(len(data)))
	body = append(body, e...)
	le.PutUint32(body[60:], count+1)
	le.PutUint64(body[64:], newDir)
	le.PutUint64(body[72:], uint64(len(body)))
	le.PutUint16(body[10:], 3) // minor 3
	refreshCRCs(body)
	return body
}

func TestUnknownSections(t *testing.T) {
	f, err := snapshot.FromBytes(withExtraSection(t, 900, snapshot.SectionOptional))
	if err != nil {
		t.Fatalf("unknown optional section: %v", err)
	}
	if err := f.Verify(); err != nil {
		t.Fatalf("unknown optional section: %v", err)
	}
	checkAgainstModel(t, tinyState(), csr.New(f), false)
	if _, err := snapshot.FromBytes(withExtraSection(t, 900, 0)); !errors.Is(err, snapshot.ErrUnsupported) {
		t.Fatalf("unknown required section: err = %v, want ErrUnsupported", err)
	}
}

func TestOpenAllocatesNothingThatGrows(t *testing.T) {
	dir := t.TempDir()
	allocs := map[int]float64{}
	for _, n := range []int{50, 20000} {
		path := filepath.Join(dir, fmt.Sprintf("g%d.snap", n))
		if _, err := snapshot.WriteFile(path, randomState(rand.New(rand.NewPCG(1, uint64(n))), n, 3*n), snapshot.WriterOptions{}); err != nil {
			t.Fatal(err)
		}
		allocs[n] = testing.AllocsPerRun(20, func() {
			f, err := snapshot.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			g := csr.New(f)
			if _, ok, _ := g.Lookup(1); ok {
				t.Log("unexpected id")
			}
			f.Close()
		})
	}
	if allocs[50] != allocs[20000] {
		t.Fatalf("Open allocations grow with the graph: %v", allocs)
	}
	if allocs[50] > 10 {
		t.Fatalf("Open allocates %v times", allocs[50])
	}
}

// TestNodeTypeIsNodeStringsType: NodeType answers NodeStrings' first
// string for every node of the tiny state, and the same error past the
// last node.
func TestNodeTypeIsNodeStringsType(t *testing.T) {
	f, err := snapshot.FromBytes(mustWrite(t, tinyState(), snapshot.WriterOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	n := uint32(f.Header().NodeCount)
	types := map[string]bool{}
	for i := range n + 2 {
		want, _, _, _, werr := f.NodeStrings(i)
		got, gerr := f.NodeType(i)
		if got != want || (werr == nil) != (gerr == nil) {
			t.Errorf("node %d: NodeType %q, %v; NodeStrings %q, %v", i, got, gerr, want, werr)
		}
		types[got] = true
	}
	if len(types) < 3 { // two types and "" past the end
		t.Errorf("the tiny state has too few node types to tell them apart: %v", types)
	}
}

// TestNodesOfTypeIsNodeType: NodesOfType sets a node's bit exactly when
// NodeType answers that type, and its bad bit exactly when NodeType fails
// — on the tiny state, and on every copy of it with one byte flipped that
// still opens (a flip in a node row's type id, or in the string table).
func TestNodesOfTypeIsNodeType(t *testing.T) {
	orig := mustWrite(t, tinyState(), snapshot.WriterOptions{})
	check := func(f *snapshot.File, what string) {
		n := uint32(f.NumNodes())
		types := map[string]bool{"": true, "nope": true}
		for i := range n {
			typ, _ := f.NodeType(i)
			types[typ] = true
		}
		for typ := range types {
			match, bad := f.NodesOfType(typ)
			for i := range n {
				got, gerr := f.NodeType(i)
				isBad, isMatch := bad[i/64]&(1<<(i%64)) != 0, match[i/64]&(1<<(i%64)) != 0
				if isBad != (gerr != nil) || (!isBad && isMatch != (got == typ)) {
					t.Fatalf("%s: type %q, node %d: match %v, bad %v; NodeType %q, %v", what, typ, i, isMatch, isBad, got, gerr)
				}
			}
		}
	}
	f, err := snapshot.FromBytes(orig)
	if err != nil {
		t.Fatal(err)
	}
	check(f, "intact")
	opened, badTypes := 0, 0
	for i := range orig {
		b := bytes.Clone(orig)
		b[i] ^= 0x5a
		if f, err := snapshot.FromBytes(b); err == nil {
			opened++
			check(f, fmt.Sprintf("byte %d flipped", i))
			for i := range uint32(f.NumNodes()) {
				if _, err := f.NodeType(i); err != nil {
					badTypes++
					break
				}
			}
		}
	}
	// The check above must have met damaged types, or it proved nothing.
	if opened == 0 || badTypes == 0 {
		t.Fatalf("of %d flips, %d opened and %d had a node type that cannot be read", len(orig), opened, badTypes)
	}
	t.Logf("%d flips opened, %d with an unreadable node type", opened, badTypes)
}
