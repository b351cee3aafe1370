package cli

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/memctl/memctl/lmdbstore"
)

// damage replaces, in keyspace dbi of the store at db, the value of the
// first key starting with prefix by edit(old value). It opens the
// environment directly, with no memctl run live in this process
// (LMDB-NOTES: one env per process).
func damage(t *testing.T, db, dbi string, prefix []byte, edit func(old []byte) []byte) {
	t.Helper()
	env, err := lmdb.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	if err := env.SetMaxDBs(16); err != nil {
		t.Fatal(err)
	}
	if err := env.SetMaxReaders(1024); err != nil {
		t.Fatal(err)
	}
	if err := env.SetMapSize(1 << 30); err != nil {
		t.Fatal(err)
	}
	if err := env.Open(db, 0, 0o644); err != nil {
		t.Fatal(err)
	}
	err = env.Update(func(txn *lmdb.Txn) error {
		h, err := txn.OpenDBI(dbi, 0)
		if err != nil {
			return err
		}
		cur, err := txn.OpenCursor(h)
		if err != nil {
			return err
		}
		defer cur.Close()
		k, v, err := cur.Get(prefix, nil, lmdb.SetRange)
		if err != nil {
			return err
		}
		if !bytes.HasPrefix(k, prefix) {
			t.Fatalf("no %s key starts with %x", dbi, prefix)
		}
		return txn.Put(h, bytes.Clone(k), edit(bytes.Clone(v)), 0)
	})
	if err != nil {
		t.Fatalf("damaging %s: %v", dbi, err)
	}
}

func idKey(key string) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(lmdbstore.IDOf(key)))
}

// Hand-damaged values are reported as corruption (exit 3) by the reads
// that meet them and by check, never as a wrong answer or a crash. That
// includes damage leaving the value well-formed (one flipped payload or
// peer byte): the value's CRC-32C trailer no longer matches.
func TestCorruptionIsExit3(t *testing.T) {
	garbage := func([]byte) []byte { return []byte{1, 0xff, 0xff, 0xff, 0xff} }
	// flipAt flips one bit of the byte at i (counted from the end if < 0).
	flipAt := func(i int) func([]byte) []byte {
		return func(v []byte) []byte {
			if i < 0 {
				i += len(v)
			}
			v[i] ^= 1
			return v
		}
	}
	for _, tc := range []struct {
		name   string
		dbi    string
		prefix []byte
		edit   func([]byte) []byte
		read   []string
	}{
		{"node record", "n", idKey("file:a.go"), garbage, []string{"get-node", "file:a.go"}},
		{"out adjacency", "out", idKey("file:a.go"), garbage, []string{"get-out", "file:a.go"}},
		{"in adjacency", "in", idKey("sym:a.F"), garbage, []string{"get-in", "sym:a.F"}},
		// the payload's last byte ('}') sits just before the 4-byte trailer
		{"node payload byte flipped", "n", idKey("file:a.go"), flipAt(-5), []string{"get-node", "file:a.go"}},
		// byte 3 is inside the first entry's peer id
		{"out peer byte flipped", "out", idKey("file:a.go"), flipAt(3), []string{"get-out", "file:a.go"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := initStore(t) // no check on cleanup: the store is damaged on purpose
			edgeGraph(t, db)
			ok(t, "--db", db, "put-node", "file:a.go", "--payload", `{"x":1}`)
			damage(t, db, tc.dbi, tc.prefix, tc.edit)

			wantFailure(t, memctl(t, append([]string{"--db", db}, tc.read...)...), ExitCorrupt, "corrupt")
			r := memctl(t, "--db", db, "check")
			if r.Code != ExitCorrupt {
				t.Errorf("check: exit %d, want %d\n%s%s", r.Code, ExitCorrupt, r.Stdout, r.Stderr)
			}
			if !strings.Contains(r.Stdout, "problem: ") || !strings.HasPrefix(lastLine(r.Stdout), "FAILED: ") {
				t.Errorf("check does not list the problem:\n%s", r.Stdout)
			}
			if !strings.HasPrefix(r.Stderr, "memctl: check: ") || strings.Count(r.Stderr, "\n") != 1 {
				t.Errorf("check stderr %q, want one \"memctl: check: \" line", r.Stderr)
			}
		})
	}
}
