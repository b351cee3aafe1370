package lmdbstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// randomHistory writes txns random transactions: node puts (some payloads
// long enough to be compressed), edge puts and deletes, kv puts and
// deletes, over keys drawn from a space large enough that B-tree pages
// split in random places.
func randomHistory(t *testing.T, s *Store, rng *rand.Rand, txns int) {
	t.Helper()
	key := func() string { return fmt.Sprintf("sym:pkg%d.F%d", rng.IntN(30), rng.IntN(400)) }
	rels := []string{"calls", "imports", "defines", "tests"}
	for range txns {
		mustUpdate(t, s, WriteMeta{RunID: fmt.Sprint("run", rng.IntN(3))}, func(tx *WriteTxn) error {
			for range 20 + rng.IntN(40) {
				var err error
				switch r := rng.IntN(10); {
				case r < 2:
					body := strings.Repeat(fmt.Sprint("doc ", rng.IntN(1000), " "), rng.IntN(60))
					err = tx.PutNode(NodePut{Key: key(), Type: "symbol", Payload: json.RawMessage(fmt.Sprintf(`{"doc":%q}`, body))})
				case r < 7:
					p := EdgePut{Src: key(), Rel: rels[rng.IntN(len(rels))], Dst: key()}
					if rng.IntN(4) == 0 {
						p.Weight = 0.25
					}
					err = tx.PutEdge(p)
				case r < 8:
					err = tx.DeleteEdge(key(), rels[rng.IntN(len(rels))], key())
					if errors.Is(err, ErrNotFound) {
						err = nil
					}
				case r < 9:
					err = tx.PutKV(KVPut{Scope: "repo", Namespace: "notes", Key: fmt.Sprint("k", rng.IntN(50)), Payload: json.RawMessage(fmt.Sprint(rng.IntN(1e6)))})
				default:
					err = tx.DeleteKV("repo", "notes", fmt.Sprint("k", rng.IntN(50)))
					if errors.Is(err, ErrNotFound) {
						err = nil
					}
				}
				if err != nil {
					return err
				}
			}
			return nil
		})
	}
}

// history is every operation of the store's log, as diff-since returns it.
func history(t *testing.T, s *Store) []Op {
	t.Helper()
	var ops []Op
	if err := s.View(func(r *ReadTxn) error {
		return r.DiffSince(AtRevision(0), DiffFilter{}, func(op Op) error {
			ops = append(ops, op)
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	return ops
}

func TestVacuumInto(t *testing.T) {
	s := newStore(t, Options{})
	randomHistory(t, s, rand.New(rand.NewPCG(1, 2)), 120)
	if _, err := s.Compact(); err != nil { // merged chunks: rewritten in place, freeing pages
		t.Fatal(err)
	}
	randomHistory(t, s, rand.New(rand.NewPCG(3, 4)), 30)

	dir := filepath.Join(t.TempDir(), "copy")
	st, err := s.VacuumInto(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := openCopy(t, dir)

	// The same store: every keyspace byte for byte, hence the same answers
	// at every revision; checked through the API too.
	if diff := cmp.Diff(dumpAll(t, s), dumpAll(t, c)); diff != "" {
		t.Fatalf("keyspaces differ (-source +copy):\n%s", diff)
	}
	if diff := cmp.Diff(history(t, s), history(t, c), cmpOpts...); diff != "" {
		t.Fatalf("diff-since 0 differs (-source +copy):\n%s", diff)
	}
	mustCheck(t, c)
	cs, err := c.Stats()
	if err != nil {
		t.Fatal(err)
	}
	ss, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if cs.Revision != ss.Revision || cs.Nodes != ss.Nodes || cs.Edges != ss.Edges || cs.KVs != ss.KVs || ss.Edges < 1000 {
		t.Fatalf("copy: rev %d, %d nodes, %d edges, %d kvs; source: rev %d, %d, %d, %d",
			cs.Revision, cs.Nodes, cs.Edges, cs.KVs, ss.Revision, ss.Nodes, ss.Edges, ss.KVs)
	}
	if st.Revision != ss.Revision {
		t.Fatalf("VacuumStats.Revision = %d, store at %d", st.Revision, ss.Revision)
	}

	// Denser: no keyspace takes more pages than in the source, the whole
	// takes fewer, and the file is no larger than the pages in use.
	src, err := s.Space()
	if err != nil {
		t.Fatal(err)
	}
	dst, err := c.Space()
	if err != nil {
		t.Fatal(err)
	}
	var srcPages, dstPages, entries uint64
	for i := range src {
		if dst[i].Pages() > src[i].Pages() {
			t.Errorf("keyspace %s: %d pages in the copy, %d in the source", src[i].Name, dst[i].Pages(), src[i].Pages())
		}
		srcPages += src[i].Pages()
		dstPages += dst[i].Pages()
		entries += src[i].Entries
	}
	if dstPages*10 > srcPages*9 {
		t.Errorf("copy has %d pages in its keyspaces, source %d: want at least 10%% fewer", dstPages, srcPages)
	}
	if st.Entries != entries {
		t.Errorf("VacuumStats.Entries = %d, source keyspaces hold %d", st.Entries, entries)
	}
	if st.CopyFile >= st.SourceFile {
		t.Errorf("copy file %d bytes, source file %d", st.CopyFile, st.SourceFile)
	}
	t.Logf("source file %d, in use %d; copy %d (%d → %d pages)", st.SourceFile, st.SourceInUse, st.CopyFile, srcPages, dstPages)

	// The copy is a store like any other: it takes writes.
	if _, err := c.Update(WriteMeta{}, func(tx *WriteTxn) error {
		return tx.PutEdge(EdgePut{Src: "sym:a", Rel: "calls", Dst: "sym:b"})
	}); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, c)
}

func TestVacuumIntoRefuses(t *testing.T) {
	s := newStore(t, Options{})
	putEdge(t, s, "sym:a", "calls", "sym:b")
	before := dumpAll(t, s)

	// Into the store itself.
	if _, err := s.VacuumInto(s.Path()); !errors.Is(err, ErrInvalid) {
		t.Errorf("into itself: %v, want ErrInvalid", err)
	}
	// Into another store: it is left alone.
	other := newStore(t, Options{})
	putEdge(t, other, "sym:x", "calls", "sym:y")
	otherBefore := dumpAll(t, other)
	if _, err := s.VacuumInto(other.Path()); !errors.Is(err, ErrExists) {
		t.Errorf("into a store: %v, want ErrExists", err)
	}
	if diff := cmp.Diff(otherBefore, dumpAll(t, other)); diff != "" {
		t.Errorf("the other store changed:\n%s", diff)
	}
	// Into a file.
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.VacuumInto(f); !errors.Is(err, ErrInvalid) {
		t.Errorf("into a file: %v, want ErrInvalid", err)
	}
	// Into a directory that cannot take the copy: nothing is left behind.
	ro := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() != 0 { // root writes anyway
		if _, err := s.VacuumInto(ro); err == nil {
			t.Errorf("into a read-only directory: no error")
		}
		if ents, _ := os.ReadDir(ro); len(ents) != 0 {
			t.Errorf("a failed vacuum left %v", ents)
		}
	}
	if diff := cmp.Diff(before, dumpAll(t, s)); diff != "" {
		t.Errorf("the source changed:\n%s", diff)
	}
}

// TestVacuumWhileWriting: a writer goes on during the copy; the copy is the
// source as of one revision (its log is the source's log up to it).
func TestVacuumWhileWriting(t *testing.T) {
	s := newStore(t, Options{})
	randomHistory(t, s, rand.New(rand.NewPCG(5, 6)), 40)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 200 {
			if _, err := s.Update(WriteMeta{}, func(tx *WriteTxn) error {
				return tx.PutEdge(EdgePut{Src: fmt.Sprint("sym:w", i), Rel: "calls", Dst: "sym:target"})
			}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	dir := filepath.Join(t.TempDir(), "copy")
	st, err := s.VacuumInto(dir)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	c := openCopy(t, dir)
	mustCheck(t, c)
	var want []Op
	for _, op := range history(t, s) {
		if op.Rev <= st.Revision {
			want = append(want, op)
		}
	}
	if diff := cmp.Diff(want, history(t, c), cmpOpts...); diff != "" {
		t.Fatalf("copy's log is not the source's up to rev %d (-want +got):\n%s", st.Revision, diff)
	}
}

// TestStatsSuggestsVacuum: stats suggests vacuum exactly when data.mdb is
// more than 1.5 times the pages in use (the size floor lowered to 0 here):
// not for a store written once, yes once retention has dropped most of
// the history, not for the vacuumed copy.
func TestStatsSuggestsVacuum(t *testing.T) {
	hint := func(st *Store) bool {
		t.Helper()
		stats, err := st.Stats()
		if err != nil {
			t.Fatal(err)
		}
		got := false
		for _, w := range stats.Warnings {
			got = got || strings.Contains(w, "memctl vacuum --to DIR")
		}
		fi, err := os.Stat(filepath.Join(st.Path(), "data.mdb"))
		if err != nil {
			t.Fatal(err)
		}
		var inUse int64
		for _, k := range stats.Keyspaces {
			inUse += int64(k.Bytes)
		}
		if want := float64(fi.Size()) > 1.5*float64(inUse); got != want {
			t.Fatalf("file %d bytes, keyspaces %d: hint %v, want %v", fi.Size(), inUse, got, want)
		}
		return got
	}
	s := newStore(t, Options{})
	s.vacuumHintMin = 0
	rng := rand.New(rand.NewPCG(9, 10))
	payload := func() json.RawMessage {
		b := make([]byte, 300) // random bytes: the payload does not compress
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return json.RawMessage(fmt.Sprintf(`{"v":"%x"}`, b))
	}
	write := func() {
		mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error {
			for j := range 50 {
				if err := tx.PutNode(NodePut{Key: fmt.Sprint("doc:", j), Payload: payload()}); err != nil {
					return err
				}
			}
			return nil
		})
	}
	write()
	if hint(s) {
		t.Fatal("vacuum suggested for a store written once")
	}
	for range 60 {
		write()
	}
	if err := s.SetRetention(1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	if !hint(s) {
		t.Fatal("no vacuum hint once retention dropped 60 of 61 versions")
	}
	dir := filepath.Join(t.TempDir(), "copy")
	if _, err := s.VacuumInto(dir); err != nil {
		t.Fatal(err)
	}
	c := openCopy(t, dir)
	c.vacuumHintMin = 0
	if hint(c) {
		t.Fatal("the vacuumed copy still gets the hint")
	}
}

// openCopy opens the store VacuumInto wrote in dir, closed when the test
// ends.
func openCopy(t *testing.T, dir string) *Store {
	t.Helper()
	c, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
