package codetree

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/plaincodec"
)

// ingested returns a cache holding the parses and the graph of an ingest
// of the Python fixture into a new store.
func ingested(t *testing.T) *Cache {
	t.Helper()
	s, err := lmdbstore.Init(filepath.Join(t.TempDir(), "store"), lmdbstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c := NewCache()
	if _, _, err := Ingest(s, "../../testdata/treesitter/python", Options{Langs: []string{ingest.LangPython}, Cache: c}); err != nil {
		t.Fatal(err)
	}
	if c.last == nil || c.last.rev == 0 || c.Parses() == 0 {
		t.Fatalf("the ingest left no graph or parses in the cache")
	}
	return c
}

// TestCacheFileRoundTrip: a saved cache loads back with the same graph
// (every node and edge), revision, hashes, config, others and parses.
func TestCacheFileRoundTrip(t *testing.T) {
	c := ingested(t)
	extra := []byte("the caller's\x00own bytes")
	c.SetExtra(extra)
	file, err := c.MarshalFile()
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalCache(file)
	if err != nil {
		t.Fatal(err)
	}
	l, b := c.last, back.last
	if b == nil || b.rev != l.rev || b.config != l.config || !reflect.DeepEqual(b.hashes, l.hashes) || !slices.Equal(b.others, l.others) {
		t.Fatalf("graph header read back %+v, want %+v", b, l)
	}
	if !reflect.DeepEqual(b.graph.Nodes(), l.graph.Nodes()) || !reflect.DeepEqual(b.graph.Edges(), l.graph.Edges()) {
		t.Fatal("graph read back differs")
	}
	if back.Parses() != c.Parses() {
		t.Fatalf("%d parses read back, %d saved", back.Parses(), c.Parses())
	}
	if !slices.Equal(back.Extra(), extra) {
		t.Fatalf("extra read back %q, want %q", back.Extra(), extra)
	}
}

// TestGraphPartsAsWhole: the graph part written a node and an edge at a
// time is the encoding of fileGraph as its codec reads and writes it
// whole: each decodes the other's bytes to the same graph.
func TestGraphPartsAsWhole(t *testing.T) {
	l := ingested(t).last
	var whole fileGraph
	d := plaincodec.NewDecoder(appendGraph(nil, l))
	graphCodec.DecodeInto(d, &whole)
	if err := d.Finish(); err != nil {
		t.Fatal(err)
	}
	if whole.Config != l.config || whole.Rev != uint64(l.rev) || !reflect.DeepEqual(whole.Hashes, l.hashes) || !slices.Equal(whole.Others, l.others) {
		t.Fatalf("head decoded whole %+v, want %+v", whole, l)
	}
	slices.SortFunc(whole.Nodes, func(a, b ingest.Node) int { return strings.Compare(a.Key, b.Key) })
	g := ingest.NewGraph()
	for _, e := range whole.Edges {
		g.AddEdge(e)
	}
	if !reflect.DeepEqual(whole.Nodes, l.graph.Nodes()) || !reflect.DeepEqual(g.Edges(), l.graph.Edges()) {
		t.Fatal("graph written in parts, decoded whole, differs")
	}
	d = plaincodec.NewDecoder(graphCodec.Append(nil, whole))
	h, back, others := decodeGraph(d)
	if err := d.Finish(); err != nil {
		t.Fatal(err)
	}
	if h.Config != l.config || h.Rev != uint64(l.rev) || !reflect.DeepEqual(h.Hashes, l.hashes) || !slices.Equal(others, l.others) ||
		!reflect.DeepEqual(back.Nodes(), l.graph.Nodes()) || !reflect.DeepEqual(back.Edges(), l.graph.Edges()) {
		t.Fatal("graph written whole, decoded in parts, differs")
	}
	// No graph: the zero fileGraph, as the whole codec writes it.
	if got, want := appendGraph(nil, nil), graphCodec.Append(nil, fileGraph{}); !slices.Equal(got, want) {
		t.Fatalf("no graph: %x, want %x", got, want)
	}
}

// reseal replaces the checksum of a file whose body was changed, so that
// the check after it is the one that fails.
func reseal(b []byte) []byte {
	body := b[:len(b)-4]
	return binary.LittleEndian.AppendUint32(body, crc32.Checksum(body, castagnoli))
}

// TestCacheFileRejected: each kind of unusable file fails with
// ErrCacheFile for the reason its header check names, and LoadCache
// then returns an empty, usable cache.
func TestCacheFileRejected(t *testing.T) {
	c := ingested(t)
	build := buildID()
	good := c.encodeFile(build)
	if _, err := decodeCacheFile(good, build); err != nil {
		t.Fatal(err)
	}
	with := func(build, layout string) []byte {
		b := append([]byte(cacheMagic), cacheVersion)
		b = plaincodec.AppendString(b, build)
		b = plaincodec.AppendString(b, layout)
		rest := plaincodec.NewDecoder(good[len(cacheMagic)+1:])
		_, _ = rest.String(), rest.String() // the build and layout written
		return reseal(append(append(b, rest.Rest()...), 0, 0, 0, 0))
	}
	cases := []struct {
		what string
		b    []byte
		want string
	}{
		{"empty", nil, "bad magic"},
		{"other magic", append([]byte("MEMCTLFS"), good[8:]...), "bad magic"},
		{"other version", reseal(append(append([]byte(cacheMagic), cacheVersion+1), good[9:]...)), fmt.Sprintf("version %d, want %d", cacheVersion+1, cacheVersion)},
		{"version 1 (no extra)", reseal(append(append([]byte(cacheMagic), 1), good[9:]...)), fmt.Sprintf("version 1, want %d", cacheVersion)},
		{"version 2 (payload values without their length)", reseal(append(append([]byte(cacheMagic), 2), good[9:]...)), fmt.Sprintf("version 2, want %d", cacheVersion)},
		{"version 3 (no names read by the Python resolutions)", reseal(append(append([]byte(cacheMagic), 3), good[9:]...)), fmt.Sprintf("version 3, want %d", cacheVersion)},
		{"a byte flipped", func() []byte { b := slices.Clone(good); b[len(b)/2] ^= 1; return b }(), "checksum mismatch"},
		{"truncated", good[:len(good)-10], "checksum mismatch"},
		{"another build", with(build+"x", cacheLayout), "another build"},
		{"another layout", with(build, cacheLayout+"x"), "layout"},
		{"body cut short, checksum right", reseal(append(slices.Clone(good[:len(good)/2]), 0, 0, 0, 0)), "not usable"},
	}
	for _, tc := range cases {
		_, err := decodeCacheFile(tc.b, build)
		if !errors.Is(err, ErrCacheFile) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrCacheFile saying %q", tc.what, err, tc.want)
		}
	}
	got, err := UnmarshalCache(cases[3].b)
	if !errors.Is(err, ErrCacheFile) || got == nil || got.last != nil || got.Parses() != 0 {
		t.Fatalf("UnmarshalCache of a damaged file: %v, %+v", err, got)
	}
}
