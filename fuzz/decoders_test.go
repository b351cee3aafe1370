package fuzz

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/memctl/memctl/adjacency"
	"github.com/memctl/memctl/lmdbstore"
)

// hangLimit is how long one fuzz input may run before it counts as a hang.
const hangLimit = 20 * time.Second

// allocated returns the bytes fn allocated on the heap.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// allocBudget is what decoding n input bytes (producing out bytes of
// result) may allocate: a fixed allowance for codec state, plus a constant
// factor of what came in and what came out.
func allocBudget(in, out int) uint64 { return 8<<20 + 64*uint64(in) + 4*uint64(out) }

// FuzzAdjacencyChunk: a chunk value either decodes to entries that encode
// back to the same bytes, or fails with a *adjacency.CorruptError inside
// the value. Iterator, Decode and Verify agree.
func FuzzAdjacencyChunk(f *testing.F) {
	for _, p := range rawDump(f, fixture(f))["out"] {
		f.Add(p.V)
	}
	f.Add(adjacency.Encode(nil, []adjacency.Entry{
		{Rel: 1, Peer: 5, Rev: 1, Weight: 1},
		{Rel: 1, Peer: 5, Rev: 2, Flags: adjacency.FlagTombstone, Weight: 1},
		{Rel: 3, Peer: 1 << 63, Rev: 9, Weight: 0.25},
	}))
	f.Add([]byte{adjacency.Version, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		defer watchdog(hangLimit)()
		// As stored (mostly a checksum mismatch), and resealed with a valid
		// CRC-32C trailer so that mutations reach the entry decoder.
		checkChunk(t, b)
		checkChunk(t, resealed(b))
	})
}

func checkChunk(t *testing.T, b []byte) {
	t.Helper()
	var entries []adjacency.Entry
	var err error
	if n := allocated(func() { entries, err = adjacency.Decode(b, nil) }); n > allocBudget(len(b), 0) {
		t.Fatalf("Decode of %d bytes allocated %d bytes", len(b), n)
	}
	verr := adjacency.Verify(b)
	if err != nil {
		var ce *adjacency.CorruptError
		if !errors.As(err, &ce) || !errors.Is(err, adjacency.ErrCorrupt) {
			t.Fatalf("untyped error %T: %v", err, err)
		}
		if ce.Offset < 0 || ce.Offset > len(b) {
			t.Fatalf("error offset %d outside the %d-byte value", ce.Offset, len(b))
		}
		if verr == nil {
			t.Fatalf("Decode fails (%v) but Verify accepts", err)
		}
		return
	}
	if len(entries) > 0 && verr != nil {
		t.Fatalf("Decode accepts %d entries but Verify fails: %v", len(entries), verr)
	}
	if got := adjacency.Encode(nil, entries); !bytes.Equal(got, b) {
		t.Fatalf("decoded value does not re-encode to its bytes:\n in  %x\n out %x\nentries %+v", b, got, entries)
	}
	// The zero-allocation iterator sees the same entries.
	var it adjacency.Iterator
	it.Reset(b)
	i := 0
	for it.Next() {
		if i >= len(entries) || it.Entry() != entries[i] {
			t.Fatalf("iterator entry %d differs from Decode", i)
		}
		i++
	}
	if it.Err() != nil || i != len(entries) {
		t.Fatalf("iterator: %d entries, err %v; Decode: %d", i, it.Err(), len(entries))
	}
}

// resealed is b with the 4-byte little-endian CRC-32C of all of b appended:
// the trailer every stored value ends with (SPEC.md §2, §3).
func resealed(b []byte) []byte {
	return binary.LittleEndian.AppendUint32(bytes.Clone(b), crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
}

// valueKeyspaces is the order FuzzStoreValue's first byte picks from.
var valueKeyspaces = []string{"n", "e", "kv", "hist", "rel", "relname", "ids", "meta", "ts", "log", "revs"}

// FuzzStoreValue: every value decoder of the store (the first input byte
// picks the keyspace, then a length-prefixed key, then the value) either
// fails with a *lmdbstore.CorruptionError or decodes to something whose
// canonical encoding is the input value.
func FuzzStoreValue(f *testing.F) {
	d := rawDump(f, fixture(f))
	logFormats := map[byte]bool{}
	for i, db := range valueKeyspaces {
		for _, p := range d[db] {
			f.Add(storeValueInput(byte(i), p.K, p.V))
			if db == "log" {
				logFormats[p.V[0]] = true
			}
		}
	}
	if !logFormats[1] || !logFormats[3] {
		f.Fatalf("the fixture's log records have formats %v, want 1 and 3", logFormats)
	}
	// Format 02 (no key table), which this memctl reads and no longer
	// writes: one put_node of a long payload, compressed.
	ops := []byte{1, 0, 0, 0, 6}
	ops = append(ops, "file:z"...)
	ops = append(ops, 4)
	ops = append(ops, "file"...)
	payload := `"` + strings.Repeat("p", 400) + `"`
	ops = binary.AppendUvarint(ops, uint64(len(payload)))
	ops = append(ops, payload...)
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		f.Fatal(err)
	}
	rec := binary.BigEndian.AppendUint64([]byte{2}, 1)
	rec = append(rec, 0, 0, 0, 1)
	rec = binary.AppendUvarint(rec, uint64(len(ops)))
	var dec lmdbstore.RecordDecoder
	f.Cleanup(dec.Close)
	key, v02 := binary.BigEndian.AppendUint64(nil, 1), resealed(enc.EncodeAll(ops, rec))
	if _, err := dec.DecodeValue("log", key, v02); err != nil {
		f.Fatalf("the format-02 seed: %v", err)
	}
	f.Add(storeValueInput(byte(slices.Index(valueKeyspaces, "log")), key, v02))
	f.Fuzz(func(t *testing.T, in []byte) {
		defer watchdog(hangLimit)()
		// As stored (mostly a checksum mismatch), and with the value resealed
		// with a valid CRC-32C trailer so that mutations reach the decoders.
		checkStoreValue(t, &dec, in)
		if _, key, value, ok := splitStoreValueInput(in); ok {
			checkStoreValue(t, &dec, storeValueInput(in[0], key, resealed(value)))
		}
	})
}

func checkStoreValue(t *testing.T, dec *lmdbstore.RecordDecoder, in []byte) {
	t.Helper()
	db, key, value, ok := splitStoreValueInput(in)
	if !ok {
		return
	}
	var canonical []byte
	var err error
	if n := allocated(func() { canonical, err = dec.DecodeValue(db, key, value) }); n > allocBudget(len(in), len(canonical)) {
		t.Fatalf("%s value of %d bytes: decoding allocated %d bytes", db, len(value), n)
	}
	if err != nil {
		var ce *lmdbstore.CorruptionError
		if !errors.As(err, &ce) || !errors.Is(err, lmdbstore.ErrCorrupt) {
			t.Fatalf("%s: untyped error %T: %v", db, err, err)
		}
		if ce.Keyspace == "" {
			t.Fatalf("%s: error does not name the keyspace: %v", db, err)
		}
		return
	}
	if canonical == nil {
		return
	}
	again, err := dec.DecodeValue(db, key, canonical)
	if err != nil || !bytes.Equal(again, canonical) {
		t.Fatalf("%s: canonical form %x does not decode to itself: %x, %v", db, canonical, again, err)
	}
	if value[0] == 1 && !bytes.Equal(canonical, value) {
		t.Fatalf("%s value does not re-encode to its bytes:\n in  %x\n out %x", db, value, canonical)
	}
}

func storeValueInput(db byte, key, value []byte) []byte {
	b := []byte{db, byte(len(key))}
	b = append(b, key...)
	return append(b, value...)
}

func splitStoreValueInput(in []byte) (db string, key, value []byte, ok bool) {
	if len(in) < 2 || int(in[1]) > len(in)-2 {
		return "", nil, nil, false
	}
	db = valueKeyspaces[int(in[0])%len(valueKeyspaces)]
	return db, in[2 : 2+int(in[1])], in[2+int(in[1]):], true
}

// keyKeyspaces is the order FuzzStoreKey's first byte picks from.
var keyKeyspaces = []string{"out", "in", "e", "kv", "hist", "n", "ids", "log", "ts", "rel", "revs"}

// FuzzStoreKey: every key parser either rejects the key with a
// *lmdbstore.CorruptionError or parses it to parts that encode back to it.
func FuzzStoreKey(f *testing.F) {
	d := rawDump(f, fixture(f))
	for i, db := range keyKeyspaces {
		for _, p := range d[db] {
			f.Add(append([]byte{byte(i)}, p.K...))
		}
	}
	var dec lmdbstore.RecordDecoder
	f.Cleanup(dec.Close)
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < 1 {
			return
		}
		db, key := keyKeyspaces[int(in[0])%len(keyKeyspaces)], in[1:]
		canonical, err := dec.ParseKey(db, key)
		if err != nil {
			if !errors.Is(err, lmdbstore.ErrCorrupt) {
				t.Fatalf("%s: untyped error %T: %v", db, err, err)
			}
			return
		}
		if !bytes.Equal(canonical, key) {
			t.Fatalf("%s key does not re-encode to its bytes:\n in  %x\n out %x", db, key, canonical)
		}
	})
}

// watchdog turns a hung input into a crasher: if the returned stop is not
// called within limit, it panics with every goroutine's stack, which the
// fuzzer records with the input (a plain hang would only stall the run).
func watchdog(limit time.Duration) (stop func()) {
	timer := time.AfterFunc(limit, func() {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		panic(fmt.Sprintf("input still running after %v:\n%s", limit, buf))
	})
	return func() { timer.Stop() }
}
