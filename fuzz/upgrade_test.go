package fuzz

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/roles"
)

// TestUpgradeSchema1: a store written by schema 1 (relation values without
// a creation revision, SPEC §2) opens read-only with a clear error and is
// upgraded in place by a writable open: every relation gets the revision of
// its add_rel operation (0 for the built-ins), no revision is committed, and
// check is clean.
func TestUpgradeSchema1(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	s, err := lmdbstore.Init(dir, lmdbstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
		return tx.PutNode(lmdbstore.NodePut{Key: "a:1"})
	}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"mentions", "owns", "co_changed"} {
		if _, err := s.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
			_, err := tx.AddRelation(lmdbstore.Relation{Name: name, DefaultWeight: 0.5})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()

	// Rewrite it as schema 1 wrote it: relation values 01 ‖ flags ‖ weight ‖
	// name ‖ crc, meta schema 1.
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	seal := func(b []byte) []byte { return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)) }
	withRawEnv(t, dir, true, func(env *lmdb.Env, dbis map[string]lmdb.DBI) error {
		return env.Update(func(txn *lmdb.Txn) error {
			for id, name := range map[uint32]string{1: "defines", 11: "mentions", 12: "owns", 13: "co_changed"} {
				w := float32(1)
				if id > 10 {
					w = 0.5
				}
				v := []byte{1, 0}
				v = binary.LittleEndian.AppendUint32(v, math.Float32bits(w))
				if err := txn.Put(dbis["rel"], binary.BigEndian.AppendUint32(nil, id), seal(append(v, name...)), 0); err != nil {
					return err
				}
			}
			for id, name := range []string{"references", "calls", "imports", "tests", "implements", "constrains", "decided_for", "derived_from", "supersedes"} {
				v := binary.LittleEndian.AppendUint32([]byte{1, 0}, math.Float32bits(1))
				if err := txn.Put(dbis["rel"], binary.BigEndian.AppendUint32(nil, uint32(id+2)), seal(append(v, name...)), 0); err != nil {
					return err
				}
			}
			return txn.Put(dbis["meta"], []byte("schema"), seal(binary.BigEndian.AppendUint64([]byte{1}, 1)), 0)
		})
	})

	if _, err := lmdbstore.Open(dir, lmdbstore.Options{ReadOnly: true}); !errors.Is(err, lmdbstore.ErrReadOnly) {
		t.Fatalf("read-only open of a schema-1 store: %v, want ErrReadOnly (upgrade needed)", err)
	}
	s, err = lmdbstore.Open(dir, lmdbstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.View(func(r *lmdbstore.ReadTxn) error {
		rels, err := r.Relations()
		if err != nil {
			return err
		}
		want := map[string]lmdbstore.Revision{"defines": 0, "supersedes": 0, "mentions": 2, "owns": 3, "co_changed": 4}
		// Roles (schema 1 had none): the built-ins' and ingest's by name,
		// memory for the others.
		wantRole := map[string]roles.Role{"defines": roles.Structure, "calls": roles.Usage, "implements": roles.Usage,
			"supersedes": roles.Memory, "mentions": roles.Memory, "owns": roles.Memory, "co_changed": roles.History}
		for _, rel := range rels {
			if w, ok := want[rel.Name]; ok && rel.CreatedRev != w {
				t.Errorf("%s: created at %d, want %d", rel.Name, rel.CreatedRev, w)
			}
			if w, ok := wantRole[rel.Name]; ok && rel.Role != w {
				t.Errorf("%s: role %v, want %v", rel.Name, rel.Role, w)
			}
		}
		if latest := r.Revision(); latest != 4 {
			t.Errorf("latest revision %d: the upgrade must commit none", latest)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.Check()
	if err != nil || len(rep.Problems) > 0 {
		t.Fatalf("check after upgrade: %v %v", rep.Problems, err)
	}
}

// TestUpgradeSchema2: a schema-2 store (no revs keyspace, an e record for
// every edge) is refused read-only, upgraded by a writable open (revs
// filled from the log, no revision committed, every read as before), and
// then takes schema 3's writes (implicit records) beside its old explicit
// ones, check clean at each step.
func TestUpgradeSchema2(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	s, err := lmdbstore.Init(dir, lmdbstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	// Weights given explicitly: schema 3 stores an e record for these
	// too, as schema 2 did for every edge.
	for i, m := range []lmdbstore.WriteMeta{{RunID: "r1"}, {Scope: "repo", RunID: "r2", TaskID: "t"}} {
		if _, err := s.Update(m, func(tx *lmdbstore.WriteTxn) error {
			for j := range 3 {
				if err := tx.PutEdge(lmdbstore.EdgePut{Src: fmt.Sprint("a", i), Rel: "calls", Dst: fmt.Sprint("b", j), Weight: 1}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	edges := func(s *lmdbstore.Store) string {
		t.Helper()
		var b strings.Builder
		err := s.View(func(r *lmdbstore.ReadTxn) error {
			for _, src := range []string{"a0", "a1", "a2"} {
				for _, dst := range []string{"b0", "b1", "b2"} {
					for i, at := range []lmdbstore.At{lmdbstore.AtRevision(1), {}} {
						when := []string{"rev1", "latest"}[i]
						e, err := r.GetEdge(src, "calls", dst, at)
						if err != nil {
							fmt.Fprintf(&b, "%s %s %s: not found %v\n", src, dst, when, errors.Is(err, lmdbstore.ErrNotFound))
							continue
						}
						fmt.Fprintf(&b, "%s %s %s: %+v\n", src, dst, when, e)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	before := edges(s)
	s.Close()
	withRawEnv(t, dir, true, func(env *lmdb.Env, dbis map[string]lmdb.DBI) error {
		return env.Update(func(txn *lmdb.Txn) error {
			if err := txn.Drop(dbis["revs"], true); err != nil {
				return err
			}
			castagnoli := crc32.MakeTable(crc32.Castagnoli)
			v := binary.BigEndian.AppendUint64([]byte{1}, 2)
			return txn.Put(dbis["meta"], []byte("schema"), binary.LittleEndian.AppendUint32(v, crc32.Checksum(v, castagnoli)), 0)
		})
	})
	if _, err := lmdbstore.Open(dir, lmdbstore.Options{ReadOnly: true}); !errors.Is(err, lmdbstore.ErrReadOnly) {
		t.Fatalf("read-only open of a schema-2 store: %v, want ErrReadOnly (upgrade needed)", err)
	}
	s, err = lmdbstore.Open(dir, lmdbstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if after := edges(s); after != before {
		t.Errorf("reads changed by the upgrade:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	check := func(when string) {
		t.Helper()
		rep, err := s.Check()
		if err != nil || len(rep.Problems) > 0 {
			t.Fatalf("check %s: %v %v", when, rep.Problems, err)
		}
	}
	check("after the upgrade")
	// Schema 3 writes beside the old records: a plain new edge (implicit),
	// a new weight on an old one, a delete.
	if _, err := s.Update(lmdbstore.WriteMeta{RunID: "r3"}, func(tx *lmdbstore.WriteTxn) error {
		if err := tx.PutEdge(lmdbstore.EdgePut{Src: "a2", Rel: "calls", Dst: "b0"}); err != nil {
			return err
		}
		if err := tx.PutEdge(lmdbstore.EdgePut{Src: "a0", Rel: "calls", Dst: "b1", Weight: 0.25}); err != nil {
			return err
		}
		return tx.DeleteEdge("a1", "calls", "b2")
	}); err != nil {
		t.Fatal(err)
	}
	check("after schema-3 writes")
	got := edges(s)
	for _, want := range []string{"a2 b0 latest: {Edge:{Src:", " Rev:3 Weight:0.25} Payload:[] Scope: RunID:r3 TaskID: ", "a1 b2 latest: not found true", "a1 b2 rev1: not found true"} {
		if !strings.Contains(got, want) {
			t.Errorf("after schema-3 writes, no line %q in:\n%s", want, got)
		}
	}
}
