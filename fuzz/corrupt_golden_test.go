package fuzz

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/memctl/memctl/snapshot"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the crafted files and expected errors in testdata/corrupt")

const corruptDir = "../testdata/corrupt/snapshots"

// craftedSnapshots are hand-made damages of a real export, one per check
// the reader must make (ok-* files are changes a reader must accept, such
// as a newer minor version). fix says whether CRCs are recomputed afterwards
// (so the damage must be caught by a structural check, not a checksum).
func craftedSnapshots(t testing.TB, orig []byte) map[string][]byte {
	t.Helper()
	f, err := snapshot.FromBytes(orig)
	if err != nil {
		t.Fatal(err)
	}
	sec := map[snapshot.Kind]snapshot.Section{}
	for _, s := range f.Sections() {
		sec[s.Kind] = s
	}
	le := binary.LittleEndian
	out := map[string][]byte{}
	craft := func(name string, fix bool, damage func(b []byte) []byte) {
		b := damage(bytes.Clone(orig))
		if fix {
			fixCRCs(b)
		}
		out[name] = b
	}
	at := func(k snapshot.Kind, i uint64) uint64 { return sec[k].Offset + i }
	craft("bad-magic", false, func(b []byte) []byte { b[0] = 'X'; return b })
	craft("newer-major-version", true, func(b []byte) []byte { le.PutUint16(b[8:], 4); return b })
	craft("older-major-version", true, func(b []byte) []byte { le.PutUint16(b[8:], 2); return b })
	craft("ok-newer-minor-version", true, func(b []byte) []byte { le.PutUint16(b[10:], 7); return b })
	craft("header-crc", false, func(b []byte) []byte { b[20] ^= 1; return b })
	craft("reserved-header-byte", true, func(b []byte) []byte { b[90] = 1; return b })
	craft("truncated", false, func(b []byte) []byte { return b[:len(b)-100] })
	craft("extended", false, func(b []byte) []byte { return append(b, make([]byte, 64)...) })
	craft("shorter-than-header", false, func(b []byte) []byte { return b[:100] })
	craft("directory-crc", false, func(b []byte) []byte { b[len(b)-5] ^= 1; return b })
	craft("section-crc-fwd-targets", false, func(b []byte) []byte { b[at(snapshot.KindFwdTargets, 0)] ^= 1; return b })
	craft("section-past-end", true, func(b []byte) []byte {
		dir := le.Uint64(b[64:])
		le.PutUint64(b[dir+16:], uint64(len(b))) // first entry's length
		return b
	})
	craft("fwd-target-out-of-range", true, func(b []byte) []byte { le.PutUint32(b[at(snapshot.KindFwdTargets, 0):], 1<<30); return b })
	craft("fwd-offsets-decreasing", true, func(b []byte) []byte { le.PutUint64(b[at(snapshot.KindFwdOffsets, 8):], 1<<40); return b })
	craft("node-ids-unsorted", true, func(b []byte) []byte {
		p := at(snapshot.KindNodeIDs, 0)
		x, y := le.Uint64(b[p:]), le.Uint64(b[p+8:])
		le.PutUint64(b[p:], y)
		le.PutUint64(b[p+8:], x)
		return b
	})
	craft("string-offset-past-bytes", true, func(b []byte) []byte { le.PutUint64(b[at(snapshot.KindStrOffsets, 8):], 1<<40); return b })
	craft("relation-id-zero", true, func(b []byte) []byte { le.PutUint32(b[at(snapshot.KindRelations, 0):], 0); return b })
	craft("key-order-out-of-range", true, func(b []byte) []byte { le.PutUint32(b[at(snapshot.KindKeyOrder, 0):], 1<<20); return b })
	craft("payload-unknown-encoding", true, func(b []byte) []byte {
		// The first non-empty payload entry's encoding byte.
		offs := at(snapshot.KindPayloadOffsets, 0)
		for i := uint64(0); ; i++ {
			lo, hi := le.Uint64(b[offs+8*i:]), le.Uint64(b[offs+8*i+8:])
			if hi > lo {
				b[at(snapshot.KindPayloads, lo)] = 7
				return b
			}
		}
	})
	craft("padding-not-zero", true, func(b []byte) []byte {
		for _, k := range []snapshot.Kind{snapshot.KindRelations, snapshot.KindKeyOrder, snapshot.KindFwdTargets} {
			s := sec[k]
			if end := s.Offset + s.Length; end%snapshot.SectionAlign != 0 {
				b[end] = 0xee
				break
			}
		}
		return b
	})
	craft("rev-weight-nan", true, func(b []byte) []byte { le.PutUint32(b[at(snapshot.KindRevWeights, 0):], 0x7fc00000); return b })
	return out
}

// TestCorruptGoldenSnapshots runs `memctl snapshot verify` and a default
// read on each crafted file in testdata/corrupt/snapshots and compares exit
// code and message with the .want file beside it (-rewrite regenerates
// both from a fresh export of the fixture store).
func TestCorruptGoldenSnapshots(t *testing.T) {
	if *rewrite {
		src := copyStore(t, fixture(t))
		good := filepath.Join(t.TempDir(), "good.snap")
		if r := memctlIn("", "--db", src, "export", "--out", good, "--logical"); r.Code != 0 {
			t.Fatalf("export: %s", r.Stderr)
		}
		orig, err := os.ReadFile(good)
		if err != nil {
			t.Fatal(err)
		}
		os.RemoveAll(corruptDir)
		if err := os.MkdirAll(corruptDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range craftedSnapshots(t, orig) {
			if err := os.WriteFile(filepath.Join(corruptDir, name+".snap"), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join(corruptDir, "*.snap"))
	if len(files) == 0 {
		t.Fatalf("no crafted files in %s (run with -rewrite)", corruptDir)
	}
	sort.Strings(files)
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".snap")
		t.Run(name, func(t *testing.T) {
			var got strings.Builder
			for _, args := range [][]string{{"snapshot", "verify", file}, {"snapshot", "get-out", file, "hub:h"}} {
				r := memctlIn("", args...)
				fmt.Fprintf(&got, "$ memctl %s %s\nexit %d\n%s", args[0], args[1], r.Code, strings.ReplaceAll(r.Stderr, file, "FILE"))
				if accepted := strings.HasPrefix(name, "ok-"); (r.Code == 0) != accepted {
					t.Errorf("memctl %v: exit %d (files named ok-* must be accepted, all others refused)", args[:2], r.Code)
				}
				if r.Code != 0 && strings.Count(r.Stderr, "\n") != 1 {
					t.Errorf("memctl %v: want one stderr line, got %q", args[:2], r.Stderr)
				}
			}
			wantFile := strings.TrimSuffix(file, ".snap") + ".want"
			if *rewrite {
				if err := os.WriteFile(wantFile, []byte(got.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(wantFile)
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != string(want) {
				t.Errorf("got:\n%s\nwant (%s):\n%s", got.String(), wantFile, want)
			}
		})
	}
}

// TestSeedCorpus checks that fuzz/testdata/fuzz/<Target>/ holds the seed corpus
// derived from the fixture store (-rewrite regenerates it), so the seeds
// are plain files other tools can read, not only f.Add calls.
func TestSeedCorpus(t *testing.T) {
	d := rawDump(t, fixture(t))
	seeds := map[string][][]byte{}
	sample := func(target string, items [][]byte) {
		step := max(1, len(items)/24)
		for i := 0; i < len(items); i += step {
			seeds[target] = append(seeds[target], items[i])
		}
	}
	var values, keys, chunks [][]byte
	for i, db := range valueKeyspaces {
		for _, p := range d[db] {
			values = append(values, storeValueInput(byte(i), p.K, p.V))
		}
	}
	for i, db := range keyKeyspaces {
		for _, p := range d[db] {
			keys = append(keys, append([]byte{byte(i)}, p.K...))
		}
	}
	for _, p := range d["out"] {
		chunks = append(chunks, p.V)
	}
	sample("FuzzStoreValue", values)
	sample("FuzzStoreKey", keys)
	sample("FuzzAdjacencyChunk", chunks)
	snaps := fixtureSnapshots(t)
	seeds["FuzzSnapshot"] = snaps
	seeds["FuzzSnapshotStructure"] = snaps
	for target, list := range seeds {
		dir := filepath.Join("testdata", "fuzz", target)
		for i, b := range list {
			path := filepath.Join(dir, fmt.Sprintf("seed-%03d", i))
			content := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
			if *rewrite {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			// Seeds go stale when a format changes; that only weakens them
			// (f.Add re-derives fresh ones), so a stale one is not a failure.
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s is missing (run go test ./fuzz -run TestSeedCorpus -rewrite): %v", path, err)
				return
			}
		}
	}
}
