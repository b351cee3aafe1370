package fuzz

// Regression tests for defects the suites found in packages this one does
// not own. Each is named after the bug and fails until its owner fixes it.
// Store and chunk inputs are resealed with a valid CRC-32C trailer, so the
// structural checks, not the checksum, must reject them.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memctl/memctl/adjacency"
	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/snapshot"
)

// The chunk decoder accepts an overlong uvarint (0xc8 0x00 for 72), so two
// different byte strings decode to the same chunk and Verify cannot tell a
// damaged-but-parseable chunk from the canonical one. Found by
// FuzzAdjacencyChunk (testdata/fuzz/FuzzAdjacencyChunk/aa10e3dacd953e84).
func TestAdjacencyAcceptsOverlongVarint(t *testing.T) {
	in := resealed([]byte{adjacency.Version, 0x01, 0x30, 0xc8, 0x00, 0x30, 0x00})
	if entries, err := adjacency.Decode(in, nil); !errors.Is(err, adjacency.ErrCorrupt) {
		t.Errorf("Decode(%x) = %+v, %v; want ErrCorrupt (canonical form is %x)", in, entries, err, adjacency.Encode(nil, entries))
	}
}

// The chunk decoder accepts FlagWeight with a weight of exactly 1.0, which
// Encode never writes (1.0 is the implicit weight).
func TestAdjacencyAcceptsRedundantWeight(t *testing.T) {
	in := []byte{adjacency.Version, 0x01, 0x01, 0x01, 0x01, adjacency.FlagWeight}
	in = resealed(binary.LittleEndian.AppendUint32(in, math.Float32bits(1)))
	if entries, err := adjacency.Decode(in, nil); !errors.Is(err, adjacency.ErrCorrupt) {
		t.Errorf("Decode(%x) = %+v, %v; want ErrCorrupt (canonical form is %x)", in, entries, err, adjacency.Encode(nil, entries))
	}
}

// The record decoders (lmdbstore/records.go decoder.uvarint) accept overlong
// uvarints: an e value whose revision is written 0x80 0x00 decodes, and
// re-encodes to different bytes. Found by FuzzStoreValue
// (testdata/fuzz/FuzzStoreValue/360fd49aa80d8f42).
func TestStoreRecordAcceptsOverlongVarint(t *testing.T) {
	var dec lmdbstore.RecordDecoder
	defer dec.Close()
	key := make([]byte, 20)
	// flags 0, rev 0x80 0x00 (overlong 0), created rev, created ts, updated ts,
	// weight, scope, run, task, payload.
	value := resealed([]byte{1, 0, 0x80, 0x00, 0, 0, 0, 0, 0, 0x80, 0x3f, 0, 0, 0, 0})
	if canonical, err := dec.DecodeValue("e", key, value); !errors.Is(err, lmdbstore.ErrCorrupt) {
		t.Errorf("DecodeValue(e, %x) = %x, %v; want ErrCorrupt", value, canonical, err)
	}
}

// A compressed value claims its decompressed length up front; the decoder
// (lmdbstore/read.go decodeEnvelope, and decodeLog likewise) allocates that
// many bytes before looking at the frame, so a 12-byte damaged value costs
// a 1 GiB allocation. The claim should be bounded by what the frame can
// hold (or the buffer grown as output arrives).
func TestStoreCompressedLengthClaimAllocates(t *testing.T) {
	var dec lmdbstore.RecordDecoder
	defer dec.Close()
	value := binary.AppendUvarint([]byte{2}, 1<<30)
	value = resealed(append(value, 0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0))
	var err error
	n := allocated(func() { _, err = dec.DecodeValue("n", make([]byte, 8), value) })
	if !errors.Is(err, lmdbstore.ErrCorrupt) {
		t.Errorf("err = %v, want ErrCorrupt", err)
	}
	if n > allocBudget(len(value), 0) {
		t.Errorf("decoding a %d-byte value allocated %d bytes", len(value), n)
	}
}

// csr.Graph.LookupKey and PrefixRange (csr/graph.go) pass key_order entries
// to File.Key unchecked: on a file whose key_order section holds an
// out-of-range node index (CRCs intact, Verify not run — `snapshot get-node
// --no-verify`, or any library user that only Opens), they fail with
// snapshot.ErrOutOfRange, which the package documents as the caller's
// mistake, instead of a *FormatError naming key_order (ErrCorrupt). Found by
// FuzzSnapshotStructure (testdata/fuzz/FuzzSnapshotStructure/bbc52a921239bb68).
func TestSnapshotDamagedKeyOrderIsOutOfRange(t *testing.T) {
	b := bytes.Clone(fixtureSnapshots(t)[1])
	f, err := snapshot.FromBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	sec := f.Sections()
	var off uint64
	for _, s := range sec {
		if s.Kind == snapshot.KindKeyOrder {
			off = s.Offset
		}
	}
	key, _ := f.Key(0)
	binary.LittleEndian.PutUint32(b[off:], 1<<16)
	fixCRCs(b)
	g, err := csr.FromBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for what, err := range map[string]error{
		"LookupKey":   func() error { _, _, err := g.LookupKey(key); return err }(),
		"PrefixRange": func() error { _, _, err := g.PrefixRange(""); return err }(),
	} {
		var fe *snapshot.FormatError
		if !errors.As(err, &fe) || fe.Section != "key_order" {
			t.Errorf("%s on a damaged key_order: %v; want a *snapshot.FormatError naming key_order", what, err)
		}
	}
}

// `memctl snapshot get-out --no-verify` on a file whose fwd_targets (or
// fwd_rels) section holds an out-of-range index exits 5 ("index out of
// range: node index 1073741824 not in [0, 126)"), the code for unexpected
// errors, instead of 3 naming the damaged section: the ErrOutOfRange that
// csr/snapshot accessors return for an index read from the file reaches the
// CLI's classifier as a caller mistake (cli/cmd_snapshot_get.go, or csr
// returning unchecked indices). Found by TestCorruptSnapshotFiles.
func TestSnapshotNoVerifyDamagedIndexExit5(t *testing.T) {
	b := bytes.Clone(fixtureSnapshots(t)[0])
	f, err := snapshot.FromBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range f.Sections() {
		if s.Kind == snapshot.KindFwdTargets {
			for i := uint64(0); i < s.Length; i += 4 {
				binary.LittleEndian.PutUint32(b[s.Offset+i:], 1<<30)
			}
		}
	}
	path := filepath.Join(t.TempDir(), "bad.snap")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := memctlIn("", "snapshot", "get-out", "--no-verify", path, "hub:h")
	if r.Code != 3 || !strings.Contains(r.Stderr, "fwd_targets") {
		t.Errorf("snapshot get-out --no-verify on damaged fwd_targets: exit %d, stderr %q; want exit 3 naming fwd_targets", r.Code, r.Stderr)
	}
}

// `--at` with a time after 2262-04-11 (the end of int64 nanoseconds) reads
// as "not found: no revision committed at or before 9999-12-31T23:59:59Z":
// lmdbstore/read.go revAtTime uses t.UnixNano(), which overflows, instead of
// clamping to the latest revision. A wrong answer for a valid RFC 3339 time.
func TestAtTimeAfterYear2262IsNotFound(t *testing.T) {
	db := copyStore(t, fixture(t))
	want := memctlIn("", "--db", db, "--json", "get-out", "hub:h")
	for _, at := range []string{"2262-04-12T00:00:00Z", "9999-12-31T23:59:59Z"} {
		r := memctlIn("", "--db", db, "--json", "get-out", "hub:h", "--at", at)
		if r.Code != 0 || r.Stdout != want.Stdout {
			t.Errorf("get-out --at %s: exit %d, stderr %q; want the latest state", at, r.Code, r.Stderr)
		}
	}
}

// `--db` naming a regular file (a snapshot, say) exits 5 with "stat
// FILE/data.mdb: not a directory": lmdbstore.Open (lmdbstore/store.go) maps
// only ENOENT to ErrNotExist, so ENOTDIR falls through as unexpected
// instead of exit 2 "no store at path".
func TestStorePathIsAFileExit5(t *testing.T) {
	file := filepath.Join(t.TempDir(), "snap")
	if err := os.WriteFile(file, []byte("MEMCTLSN"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"get-out", "a:1"}, {"put-node", "a:1"}, {"check"}} {
		r := memctlIn("", append([]string{"--db", file}, args...)...)
		if r.Code != 2 {
			t.Errorf("%v with --db a regular file: exit %d (%q), want 2", args, r.Code, r.Stderr)
		}
	}
}

// A store directory whose data.mdb is not an LMDB file exits 5 with
// "mdb_env_open: MDB_INVALID: File is not an LMDB file" (and an empty
// data.mdb, read-only, with "mdb_env_open: bad file descriptor"):
// lmdbstore/store.go openEnv does not map MDB_INVALID / MDB_VERSION_MISMATCH
// to ErrCorrupt, so a damaged or foreign data file is not exit 3.
func TestForeignDataFileExit5(t *testing.T) {
	for name, content := range map[string][]byte{
		"not lmdb": []byte(strings.Repeat("not lmdb ", 1000)),
		"empty":    nil,
	} {
		dir := filepath.Join(t.TempDir(), "db")
		os.Mkdir(dir, 0o755)
		if err := os.WriteFile(filepath.Join(dir, "data.mdb"), content, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"get-out", "a:1"}, {"check"}} {
			r := memctlIn("", append([]string{"--db", dir}, args...)...)
			if r.Code != 3 {
				t.Errorf("%s data.mdb, %v: exit %d (%q), want 3", name, args, r.Code, r.Stderr)
			}
		}
	}
}

// TestDefectPageDamageReproductions pins the two reproductions of the
// damage-below-the-values issue: a 30 KB kv value whose LMDB leaf node has a
// bit of its value-size field flipped (SIGBUS, exit 2 before), and one whose
// overflow page number is flipped (MDB_PAGE_NOTFOUND, exit 5 before). Each
// read, check and stats must exit 3 with one line, through the real binary.
func TestDefectPageDamageReproductions(t *testing.T) {
	src := filepath.Join(t.TempDir(), "db")
	big := `{"x":"` + noise(30000) + `"}`
	for _, args := range [][]string{{"init"}, {"put-kv", "repo", "decisions", "bigkey", big}} {
		if r := memctlProc(t, "", append([]string{"--db", src}, args...)...); r.Code != 0 {
			t.Fatalf("%v: %s", args[0], r.Stderr)
		}
	}
	// The kv key as stored: str(scope) str(namespace) key (SPEC §2); the
	// leaf node (8-byte header: lo, hi, flags, ksize) precedes it, and with
	// F_BIGDATA its data is the u64 overflow page number.
	key := append(append([]byte{4}, "repo"...), append(append([]byte{9}, "decisions"...), "bigkey"...)...)
	for _, tc := range []struct {
		name string
		flip func(img []byte, node int)
	}{
		{"value size", func(img []byte, node int) { img[node+3] ^= 0x40 }},
		{"overflow page number", func(img []byte, node int) { img[node+8+len(key)+2] ^= 0x10 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := copyStore(t, src)
			path := filepath.Join(db, "data.mdb")
			img, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			at := bytes.Index(img, key)
			if at < 8 || binary.LittleEndian.Uint16(img[at-2:]) != uint16(len(key)) || img[at-4]&1 == 0 {
				t.Fatalf("leaf node of the kv key not found (at %d)", at)
			}
			tc.flip(img, at-8)
			if err := os.WriteFile(path, img, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{
				{"get-kv", "repo", "decisions", "bigkey"}, {"list-kv", "repo", "decisions"}, {"check"}, {"stats"},
			} {
				r := memctlProc(t, "", append([]string{"--db", db}, args...)...)
				if r.Code != 3 || strings.Count(r.Stderr, "\n") != 1 || !(args[0] == "check" || strings.Contains(r.Stderr, "corrupt kv")) {
					t.Errorf("%v: exit %d, stderr %q; want exit 3 and one line", args, r.Code, r.Stderr)
				}
				if args[0] == "check" && !strings.Contains(r.Stdout, "problem: corrupt kv") {
					t.Errorf("check stdout does not report the damage as a problem: %q", r.Stdout)
				}
			}
		})
	}
}
