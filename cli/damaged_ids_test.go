package cli

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/memctl/memctl/lmdbstore"
)

// damageIDsKey flips a bit of the LMDB key of key's ids entry in data.mdb
// (a damaged key byte in an ids leaf page: LMDB pages carry no checksum,
// and the entry's value, CRC and all, stays intact).
func damageIDsKey(t *testing.T, db, key string) {
	t.Helper()
	path := filepath.Join(db, "data.mdb")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var id [8]byte
	binary.BigEndian.PutUint64(id[:], uint64(lmdbstore.IDOf(key)))
	// A leaf node: lo, hi, flags, ksize (u16 each), key, value (01 ‖ key ‖ crc).
	pat := append(append(binary.LittleEndian.AppendUint16(nil, 8), id[:]...), append([]byte{1}, key...)...)
	// Copy-on-write leaves older copies of the page in free pages: damage
	// every copy (the live one among them).
	n := 0
	for i := bytes.Index(b, pat); i >= 0; i = bytes.Index(b, pat) {
		b[i+2+7] ^= 0x01
		n++
	}
	if n == 0 {
		t.Fatalf("ids entry of %q not found in data.mdb", key)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Issue #26.5: an ids entry lost to a damaged key byte is corruption
// (exit 3), not "not found: node id …" (exit 1) — the page-damage suite
// met it in 10 of 6,300 runs.
func TestDamagedIDsKeyIsCorruption(t *testing.T) {
	db := initStore(t)
	ok(t, "--db", db, "put-node", "sym:a")
	ok(t, "--db", db, "put-node", "sym:b")
	ok(t, "--db", db, "put-edge", "sym:a", "calls", "sym:b")
	ok(t, "--db", db, "put-edge", "sym:a", "calls", "sym:c") // sym:c: an endpoint only
	damageIDsKey(t, db, "sym:b")
	damageIDsKey(t, db, "sym:c")
	for _, args := range [][]string{
		{"get-out", "sym:a"},
		{"get-in", "sym:b"},
		{"get-in", "sym:c"},
		{"get-node", "sym:b"},
		{"--json", "get-out", "sym:a"},
	} {
		r := memctl(t, append([]string{"--db", db}, args...)...)
		if r.Code != ExitCorrupt {
			t.Errorf("%v: exit %d, want %d (stderr %q)", args, r.Code, ExitCorrupt, r.Stderr)
		}
	}
	wantFailure(t, memctl(t, "--db", db, "get-out", "sym:a"), ExitCorrupt, "corrupt ids entry", "no ids entry")
	// What the damage does not touch still reads.
	ok(t, "--db", db, "get-node", "sym:a")
}
