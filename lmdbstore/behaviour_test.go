package lmdbstore

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/google/go-cmp/cmp"
	"github.com/memctl/memctl/adjacency"
	"github.com/memctl/memctl/roles"
)

func TestSupersedeAndTombstone(t *testing.T) {
	s := newStore(t, Options{})
	put := func(payload string) Commit {
		return mustUpdate(t, s, WriteMeta{RunID: payload}, func(tx *WriteTxn) error {
			return tx.PutNode(NodePut{Key: "decision:errors", Payload: json.RawMessage(payload)})
		})
	}
	c1 := put(`"v1"`)
	c2 := put(`"v2"`)
	c3 := mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error { return tx.DeleteNode("decision:errors") })
	c4 := put(`"v4"`)
	c5 := mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error {
		if err := tx.PutEdge(EdgePut{Src: "a", Rel: "calls", Dst: "b", Payload: json.RawMessage(`{"line":1}`)}); err != nil {
			return err
		}
		// Same edge twice in one transaction: one version.
		return tx.PutEdge(EdgePut{Src: "a", Rel: "calls", Dst: "b", Weight: 3})
	})
	c6 := mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error { return tx.DeleteEdge("a", "calls", "b") })
	_, err := s.Update(WriteMeta{}, func(tx *WriteTxn) error { return tx.DeleteEdge("a", "calls", "b") })
	wantErr(t, err, ErrNotFound)

	type nodeView struct {
		Payload        string
		Rev, Created   Revision
		RunID          string
		UpdatedIsRevTS bool
	}
	err = s.View(func(r *ReadTxn) error {
		want := map[Revision]*nodeView{
			c1.Rev: {`"v1"`, 1, 1, `"v1"`, true},
			c2.Rev: {`"v2"`, 2, 1, `"v2"`, true},
			c3.Rev: nil,
			c4.Rev: {`"v4"`, 4, 4, `"v4"`, true}, // re-created after the delete
			c6.Rev: {`"v4"`, 4, 4, `"v4"`, true},
		}
		for rev, w := range want {
			n, err := r.GetNode("decision:errors", AtRevision(rev))
			if w == nil {
				wantErr(t, err, ErrNotFound)
				continue
			}
			if err != nil {
				t.Fatalf("rev %d: %v", rev, err)
			}
			ts, _ := r.RevisionTime(n.Rev)
			got := &nodeView{string(n.Payload), n.Rev, n.CreatedRev, n.RunID, ts.Equal(n.UpdatedTS)}
			if diff := cmp.Diff(w, got); diff != "" {
				t.Errorf("rev %d (-want +got):\n%s", rev, diff)
			}
		}
		e, err := r.GetEdge("a", "calls", "b", AtRevision(c5.Rev))
		if err != nil {
			return err
		}
		if e.Weight != 3 || e.Rev != c5.Rev || e.Payload != nil {
			t.Errorf("edge at %d = %+v, want weight 3, no payload", c5.Rev, e)
		}
		_, err = r.GetEdge("a", "calls", "b", At{})
		wantErr(t, err, ErrNotFound)
		out, err := r.GetOut("a", "", AtRevision(c5.Rev))
		if err != nil || len(out) != 1 || out[0].Weight != 3 {
			t.Errorf("GetOut at %d = %+v, %v", c5.Rev, out, err)
		}
		out, err = r.GetOut("a", "", At{})
		if err != nil || len(out) != 0 {
			t.Errorf("GetOut latest = %+v, %v; want none", out, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	// Adjacency counters cover the out- and in-list of the edge (2 each).
	if st.Tombstones != 2 || st.Edges != 0 || st.Nodes != 1 || st.AdjacencyEntries != 4 || st.Superseded != 2 {
		t.Errorf("stats = %+v", st)
	}
}

func TestDiffSinceFilters(t *testing.T) {
	s := newStore(t, Options{})
	mustUpdate(t, s, WriteMeta{Scope: "repo", RunID: "r1", TaskID: "t1"}, func(tx *WriteTxn) error {
		if err := tx.PutNode(NodePut{Key: "file:x", Payload: json.RawMessage(`{"a":1}`)}); err != nil {
			return err
		}
		return tx.PutKV(KVPut{Namespace: "decisions", Key: "style", Payload: json.RawMessage(`"gofmt"`), TaskID: "t9"})
	})
	c2 := mustUpdate(t, s, WriteMeta{Scope: "repo", RunID: "r2", TaskID: "t1"}, func(tx *WriteTxn) error {
		if err := tx.PutEdge(EdgePut{Src: "file:x", Rel: "imports", Dst: "file:y", Weight: 2}); err != nil {
			return err
		}
		if _, err := tx.AddRelation(Relation{Name: "mentions"}); err != nil {
			return err
		}
		return tx.DeleteKV("", "decisions", "style")
	})
	c3 := mustUpdate(t, s, WriteMeta{Scope: "repo", RunID: "r2", TaskID: "t2"}, func(tx *WriteTxn) error {
		if err := tx.DeleteEdge("file:x", "imports", "file:y"); err != nil {
			return err
		}
		return tx.DeleteNode("file:x")
	})
	collect := func(since At, f DiffFilter) []string {
		var got []string
		err := s.View(func(r *ReadTxn) error {
			return r.DiffSince(since, f, func(op Op) error {
				got = append(got, fmt.Sprintf("%d %s %s/%s/%s %s%s%s%s %s %s %s %v %s",
					op.Rev, op.Kind, op.Scope, op.RunID, op.TaskID, op.NodeKey, op.Src, op.Namespace, op.Key, op.Rel, op.Dst, op.NodeType, op.Weight, op.Payload))
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	all := []string{
		`1 put_node repo/r1/t1 file:x   file 0 {"a":1}`,
		`1 put_kv repo/r1/t9 decistyle    0 "gofmt"`,
		`2 put_edge repo/r2/t1 file:x imports file:y  2 `,
		`2 add_rel repo/r2/t1  mentions   1 `,
		`2 del_kv repo/r2/t1 decistyle    0 `,
		`3 del_edge repo/r2/t2 file:x imports file:y  0 `,
		`3 del_node repo/r2/t2 file:x    0 `,
	}
	// Namespace and Key print back to back ("decisions"+"style"); fix the
	// expectations accordingly.
	for i := range all {
		all[i] = strings.Replace(all[i], "decistyle", "decisionsstyle", 1)
	}
	cases := []struct {
		name  string
		since At
		f     DiffFilter
		want  []string
	}{
		{"everything", AtRevision(0), DiffFilter{}, all},
		{"since rev 1", AtRevision(1), DiffFilter{}, all[2:]},
		{"since time of rev 2", AtTime(c2.Time), DiffFilter{}, all[5:]},
		{"just before rev 3", AtTime(c3.Time.Add(-1)), DiffFilter{}, all[5:]},
		{"run r2", AtRevision(0), DiffFilter{RunID: "r2"}, all[2:]},
		{"task t1", AtRevision(0), DiffFilter{TaskID: "t1"}, []string{all[0], all[2], all[3], all[4]}},
		{"run r2 task t2", AtRevision(0), DiffFilter{RunID: "r2", TaskID: "t2"}, all[5:]},
		{"latest", AtRevision(3), DiffFilter{}, nil},
	}
	for _, tc := range cases {
		if diff := cmp.Diff(tc.want, collect(tc.since, tc.f), cmpOpts...); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	err := s.View(func(r *ReadTxn) error { return r.DiffSince(AtRevision(4), DiffFilter{}, func(Op) error { return nil }) })
	wantErr(t, err, ErrNotFound)
}

func TestCollisionWritesNothing(t *testing.T) {
	s := newStore(t, Options{})
	// Every key hashes to its length: "ab" and "cd" collide.
	s.setHashForTest(func(k string) NodeID { return NodeID(len(k)) })
	putEdge(t, s, "ab", "calls", "xyz")
	_, err := s.Update(WriteMeta{}, func(tx *WriteTxn) error {
		if err := tx.PutNode(NodePut{Key: "file:ok"}); err != nil {
			return err
		}
		err := tx.PutEdge(EdgePut{Src: "cd", Rel: "calls", Dst: "file:ok"})
		var ce *CollisionError
		if !errors.As(err, &ce) || ce.Key != "cd" || ce.Existing != "ab" || ce.ID != 2 {
			t.Errorf("PutEdge error = %v, want collision of cd with ab", err)
		}
		return nil // ignoring the error must not commit anything
	})
	wantErr(t, err, ErrCollision)
	err = s.View(func(r *ReadTxn) error {
		if r.Revision() != 1 {
			t.Errorf("revision %d after a failed transaction, want 1", r.Revision())
		}
		_, err := r.GetNode("file:ok", At{})
		wantErr(t, err, ErrNotFound)
		_, err = r.GetOut("cd", "", At{})
		wantErr(t, err, ErrCollision)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestRelations(t *testing.T) {
	s := newStore(t, Options{})
	mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error {
		id, err := tx.AddRelation(Relation{Name: "mentions", DefaultWeight: 0.25, Inhibitory: true})
		if err != nil || id != 11 {
			t.Errorf("AddRelation = %d, %v; want 11", id, err)
		}
		if id, err := tx.AddRelation(Relation{Name: "uses", Role: roles.Usage}); err != nil || id != 12 {
			t.Errorf("AddRelation(uses) = %d, %v; want 12", id, err)
		}
		_, err = tx.AddRelation(Relation{Name: "badrole", Role: 7})
		wantErr(t, err, ErrInvalid)
		_, err = tx.AddRelation(Relation{Name: "calls"})
		wantErr(t, err, ErrInvalid)
		_, err = tx.AddRelation(Relation{Name: "bad name"})
		wantErr(t, err, ErrInvalid)
		return tx.PutEdge(EdgePut{Src: "a", Rel: "mentions", Dst: "b"})
	})
	err := s.View(func(r *ReadTxn) error {
		rels, err := r.Relations()
		if err != nil {
			return err
		}
		if len(rels) != 12 || rels[0].Name != "defines" || rels[9].Name != "supersedes" {
			t.Errorf("relations = %+v", rels)
		}
		want := Relation{ID: 11, Name: "mentions", DefaultWeight: 0.25, Inhibitory: true, CreatedRev: 1}
		if diff := cmp.Diff(want, rels[10]); diff != "" {
			t.Errorf("added relation (-want +got):\n%s", diff)
		}
		if rels[11].Role != roles.Usage {
			t.Errorf("uses: role %v, want usage", rels[11].Role)
		}
		// The built-ins' roles (SPEC §1).
		for i, want := range []roles.Role{roles.Structure, roles.Usage, roles.Usage, roles.Usage, roles.Usage, roles.Usage,
			roles.Memory, roles.Memory, roles.Memory, roles.Memory} {
			if rels[i].Role != want {
				t.Errorf("%s: role %v, want %v", rels[i].Name, rels[i].Role, want)
			}
		}
		out, err := r.GetOut("a", "mentions", At{})
		if err != nil || len(out) != 1 || out[0].Weight != 0.25 {
			t.Errorf("edge with the relation's default weight: %+v, %v", out, err)
		}
		_, err = r.GetOut("a", "mention", At{})
		var ue *UnknownRelationError
		if !errors.As(err, &ue) || ue.Suggestion != "mentions" {
			t.Errorf("unknown relation error = %v", err)
		}
		_, err = r.RelationByName("zzzzzzzzzzzz")
		if !errors.As(err, &ue) || ue.Suggestion != "" {
			t.Errorf("far-off name should have no suggestion: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestInvalidInput(t *testing.T) {
	s := newStore(t, Options{})
	cases := map[string]func(tx *WriteTxn) error{
		"empty key":       func(tx *WriteTxn) error { return tx.PutNode(NodePut{}) },
		"bad json":        func(tx *WriteTxn) error { return tx.PutNode(NodePut{Key: "a", Payload: json.RawMessage(`{`)}) },
		"negative weight": func(tx *WriteTxn) error { return tx.PutEdge(EdgePut{Src: "a", Rel: "calls", Dst: "b", Weight: -1}) },
		"nan weight": func(tx *WriteTxn) error {
			return tx.PutEdge(EdgePut{Src: "a", Rel: "calls", Dst: "b", Weight: float32(math.NaN())})
		},
		"kv no payload": func(tx *WriteTxn) error { return tx.PutKV(KVPut{Scope: "s", Namespace: "n", Key: "k"}) },
		"kv too long": func(tx *WriteTxn) error {
			return tx.PutKV(KVPut{Scope: "s", Namespace: "n", Key: strings.Repeat("k", 600), Payload: json.RawMessage(`1`)})
		},
		"unknown relation": func(tx *WriteTxn) error { return tx.PutEdge(EdgePut{Src: "a", Rel: "nope", Dst: "b"}) },
	}
	for name, fn := range cases {
		c, err := s.Update(WriteMeta{}, fn)
		if !errors.Is(err, ErrInvalid) || c.Rev != 0 {
			t.Errorf("%s: %+v, %v; want ErrInvalid and no commit", name, c, err)
		}
	}
}

func TestInitOpenErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(dir, Options{})
	wantErr(t, err, ErrNotExist)
	s, err := Init(dir, Options{MapSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	putEdge(t, s, "a", "calls", "b")
	s.Close()
	_, err = Init(dir, Options{})
	wantErr(t, err, ErrExists)

	ro, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ro.Update(WriteMeta{}, func(tx *WriteTxn) error { return tx.PutNode(NodePut{Key: "x"}) })
	wantErr(t, err, ErrReadOnly)
	if err := ro.View(func(r *ReadTxn) error {
		out, err := r.GetOut("a", "", At{})
		if len(out) != 1 {
			t.Errorf("read-only GetOut = %v, %v", out, err)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	ro.Close()

	// A store written by a newer schema is refused by name.
	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rawPut(t, s, s.db.meta, []byte(metaSchema), u64Value(SchemaVersion+1))
	s.Close()
	_, err = Open(dir, Options{})
	wantErr(t, err, ErrNewerSchema)
}

// rawPut writes bytes through LMDB itself, bypassing every encoder.
func rawPut(t testing.TB, s *Store, dbi lmdb.DBI, k, v []byte) {
	t.Helper()
	if _, err := s.update(func(txn *lmdb.Txn) error { return txn.Put(dbi, k, v, 0) }); err != nil {
		t.Fatal(err)
	}
}

func rawGet(t testing.TB, s *Store, dbi lmdb.DBI, k []byte) []byte {
	t.Helper()
	var v []byte
	if err := s.view(func(txn *lmdb.Txn) error {
		x, err := txn.Get(dbi, k)
		v = bytes.Clone(x)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestCorruptionDetected damages values by hand and checks that reads fail
// fast with a CorruptionError naming the keyspace and key, and that Check
// reports each one.
func TestCorruptionDetected(t *testing.T) {
	setup := func(t *testing.T) *Store {
		dir := t.TempDir()
		s, err := Init(dir, Options{MapSize: 8 << 20, NoSync: true, Clock: testClock()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error {
			if err := tx.PutNode(NodePut{Key: "file:a", Payload: json.RawMessage(`{}`)}); err != nil {
				return err
			}
			return tx.PutEdge(EdgePut{Src: "file:a", Rel: "calls", Dst: "file:b"})
		})
		return s
	}
	outKey := adjKey(IDOf("file:a"), 3, IDOf("file:b"))
	cases := []struct {
		name     string
		damage   func(t *testing.T, s *Store)
		read     func(r *ReadTxn) error
		keyspace string
		key      []byte
	}{
		{
			name: "invalid relation id in adjacency",
			damage: func(t *testing.T, s *Store) {
				v := adjacency.Encode(nil, []adjacency.Entry{{Rel: 999, Peer: uint64(IDOf("file:b")), Rev: 1, Weight: 1}})
				rawPut(t, s, s.db.out, adjKey(IDOf("file:a"), 999, IDOf("file:b")), v)
			},
			read:     func(r *ReadTxn) error { _, err := r.GetOut("file:a", "", At{}); return err },
			keyspace: dbOut, key: adjKey(IDOf("file:a"), 999, IDOf("file:b")),
		},
		{
			name: "truncated adjacency chunk",
			damage: func(t *testing.T, s *Store) {
				v := rawGet(t, s, s.db.out, outKey)
				rawPut(t, s, s.db.out, outKey, v[:len(v)-1])
			},
			read:     func(r *ReadTxn) error { _, err := r.GetOut("file:a", "calls", At{}); return err },
			keyspace: dbOut, key: outKey,
		},
		{
			name: "node value with unknown format",
			damage: func(t *testing.T, s *Store) {
				rawPut(t, s, s.db.n, nodeKey(IDOf("file:a")), []byte{9, 9, 9})
			},
			read:     func(r *ReadTxn) error { _, err := r.GetNode("file:a", At{}); return err },
			keyspace: dbNodes, key: nodeKey(IDOf("file:a")),
		},
		{
			name: "node value with trailing garbage",
			damage: func(t *testing.T, s *Store) {
				v := rawGet(t, s, s.db.n, nodeKey(IDOf("file:a")))
				rawPut(t, s, s.db.n, nodeKey(IDOf("file:a")), append(v, 0))
			},
			read:     func(r *ReadTxn) error { _, err := r.GetNode("file:a", At{}); return err },
			keyspace: dbNodes, key: nodeKey(IDOf("file:a")),
		},
		{
			name: "edge record with a bad string length",
			damage: func(t *testing.T, s *Store) {
				rawPut(t, s, s.db.e, edgeKey(IDOf("file:a"), 3, IDOf("file:b")), []byte{fmtPlain, 0, 1, 1, 1, 1, 0, 0, 128, 63, 200})
			},
			read:     func(r *ReadTxn) error { _, err := r.GetEdge("file:a", "calls", "file:b", At{}); return err },
			keyspace: dbEdges, key: edgeKey(IDOf("file:a"), 3, IDOf("file:b")),
		},
		{
			name: "log record damaged",
			damage: func(t *testing.T, s *Store) {
				v := rawGet(t, s, s.db.log, u64be(1))
				rawPut(t, s, s.db.log, u64be(1), v[:12])
			},
			read: func(r *ReadTxn) error {
				return r.DiffSince(AtRevision(0), DiffFilter{}, func(Op) error { return nil })
			},
			keyspace: dbLog, key: u64be(1),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := setup(t)
			tc.damage(t, s)
			err := s.View(tc.read)
			var ce *CorruptionError
			if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("read error = %v, want a CorruptionError", err)
			}
			if ce.Keyspace != tc.keyspace || !bytes.Equal(ce.Key, tc.key) {
				t.Errorf("error names %s %x, want %s %x", ce.Keyspace, ce.Key, tc.keyspace, tc.key)
			}
			rep, err := s.Check()
			if err != nil {
				t.Fatal(err)
			}
			wantPrefix := fmt.Sprintf("corrupt %s entry %x", tc.keyspace, tc.key)
			found := false
			for _, p := range rep.Problems {
				found = found || strings.HasPrefix(p, wantPrefix)
			}
			if !found {
				t.Errorf("Check problems %q lack %q", rep.Problems, wantPrefix)
			}
		})
	}
}

func TestCheckFindsAsymmetry(t *testing.T) {
	dir := t.TempDir()
	s, err := Init(dir, Options{MapSize: 8 << 20, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	putEdge(t, s, "a", "calls", "b")
	// drop the in-entry
	if _, err := s.update(func(txn *lmdb.Txn) error { return txn.Del(s.db.in, adjKey(IDOf("b"), 3, IDOf("a")), nil) }); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Check()
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], "missing mirror of out entry") {
		t.Fatalf("problems = %q", rep.Problems)
	}
	if diff := cmp.Diff([]string{"a", "b"}, rep.MissingNodes); diff != "" {
		t.Errorf("missing nodes (-want +got):\n%s", diff)
	}
}

// TestRawReadManyEmptyPayloads is the regression test for lmdb-go faulting
// on empty values at the end of the map under RawRead: many records with
// empty payloads, read back with RawRead.
func TestRawReadManyEmptyPayloads(t *testing.T) {
	s := newStore(t, Options{})
	const n = 3000
	mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error {
		for i := range n {
			if err := tx.PutNode(NodePut{Key: fmt.Sprint("n:", i)}); err != nil {
				return err
			}
			if err := tx.PutEdge(EdgePut{Src: fmt.Sprint("n:", i), Rel: "calls", Dst: fmt.Sprint("n:", (i+1)%n)}); err != nil {
				return err
			}
		}
		return nil
	})
	err := s.View(func(r *ReadTxn) error {
		nodes, edges := 0, 0
		if err := r.ScanNodes(At{}, func(n Node) error {
			if n.Payload != nil {
				t.Fatalf("payload %q", n.Payload)
			}
			nodes++
			return nil
		}); err != nil {
			return err
		}
		if err := r.ScanEdges(At{}, func(Edge) error { edges++; return nil }); err != nil {
			return err
		}
		if nodes != n || edges != n {
			t.Errorf("read back %d nodes, %d edges; want %d", nodes, edges, n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestMapGrowth(t *testing.T) {
	s := newStore(t, Options{MapSize: 64 << 10}) // 64 KiB: grows many times
	// Incompressible (records over 256 bytes are stored compressed).
	var noise strings.Builder
	for i := range 125 {
		fmt.Fprintf(&noise, "%016x", IDOf(fmt.Sprint(i)))
	}
	big := json.RawMessage(`"` + noise.String() + `"`)
	for i := range 40 {
		mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error {
			for j := range 50 {
				k := fmt.Sprint("file:", i, "/", j)
				if err := tx.PutNode(NodePut{Key: k, Payload: big}); err != nil {
					return err
				}
				if err := tx.PutEdge(EdgePut{Src: "hub", Rel: "defines", Dst: k}); err != nil {
					return err
				}
			}
			return nil
		})
	}
	st, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Nodes != 2000 || st.Edges != 2000 || st.MapSize <= 64<<10 {
		t.Errorf("stats after growth: %+v", st)
	}
	// A cap below what is needed is ErrMapFull, and the store stays usable.
	dir := t.TempDir()
	capped, err := Init(dir, Options{MapSize: 64 << 10, MaxMapSize: 256 << 10, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer capped.Close()
	_, err = capped.Update(WriteMeta{}, func(tx *WriteTxn) error {
		for j := range 500 {
			if err := tx.PutNode(NodePut{Key: fmt.Sprint("k", j), Payload: big}); err != nil {
				return err
			}
		}
		return nil
	})
	wantErr(t, err, ErrMapFull)
	putEdge(t, capped, "a", "calls", "b")
	mustCheck(t, capped)
}

func TestConcurrentGoroutines(t *testing.T) {
	s := newStore(t, Options{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				if _, err := s.Update(WriteMeta{}, func(tx *WriteTxn) error {
					return tx.PutEdge(EdgePut{Src: fmt.Sprint("w", w), Rel: "calls", Dst: fmt.Sprint("d", i)})
				}); err != nil {
					t.Error(err)
				}
				if err := s.View(func(r *ReadTxn) error { _, err := r.GetOut(fmt.Sprint("w", w), "", At{}); return err }); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	st, err := s.Stats()
	if err != nil || st.Edges != 100 || st.Revision != 100 {
		t.Fatalf("stats %+v, %v", st, err)
	}
}

func TestTelemetry(t *testing.T) {
	var buf bytes.Buffer
	s := newStore(t, Options{Telemetry: &buf, Session: WriteMeta{RunID: "reader"}})
	mustUpdate(t, s, WriteMeta{Scope: "repo", RunID: "r1", TaskID: "t1"}, func(tx *WriteTxn) error {
		if err := tx.PutNode(NodePut{Key: "file:a"}); err != nil {
			return err
		}
		return tx.PutEdge(EdgePut{Src: "file:a", Rel: "imports", Dst: "file:b"})
	})
	mustUpdate(t, s, WriteMeta{RunID: "r2"}, func(tx *WriteTxn) error {
		if err := tx.PutNode(NodePut{Key: "file:a", Payload: json.RawMessage(`{"v":2}`)}); err != nil {
			return err
		}
		// The same node again, unchanged: no operation, no event.
		if err := tx.PutNode(NodePut{Key: "file:a", Payload: json.RawMessage(`{ "v" : 2 }`)}); err != nil {
			return err
		}
		return tx.DeleteEdge("file:a", "imports", "file:b")
	})
	// a failed transaction emits nothing
	s.Update(WriteMeta{}, func(tx *WriteTxn) error { tx.PutNode(NodePut{Key: "file:z"}); return errors.New("no") })
	s.View(func(r *ReadTxn) error {
		r.GetOut("file:a", "", At{})
		r.GetNode("file:a", At{})
		return nil
	})
	type ev struct {
		Event, MemoryID, EntityType, Scope, RunID, TaskID string
		Missing                                           []string
		Results                                           *int
	}
	var got []ev
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var e struct {
			Event      string   `json:"event"`
			MemoryID   string   `json:"memory_id"`
			EntityType string   `json:"entity_type"`
			Scope      string   `json:"scope"`
			RunID      string   `json:"run_id"`
			TaskID     string   `json:"task_id"`
			Timestamp  string   `json:"timestamp"`
			Missing    []string `json:"missing_nodes"`
			Results    *int     `json:"results"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("bad line %q: %v", line, err)
		}
		if e.Timestamp == "" {
			t.Errorf("no timestamp: %s", line)
		}
		got = append(got, ev{e.Event, e.MemoryID, e.EntityType, e.Scope, e.RunID, e.TaskID, e.Missing, e.Results})
	}
	zero := 0
	want := []ev{
		{"write", "n:file:a", "node", "repo", "r1", "t1", nil, nil},
		{"write", "e:file:a:imports:file:b", "edge", "repo", "r1", "t1", []string{"file:b"}, nil},
		{"overwrite", "n:file:a", "node", "", "r2", "", nil, nil},
		{"delete", "e:file:a:imports:file:b", "edge", "", "r2", "", nil, nil},
		{"query", "n:file:a", "edge", "", "reader", "", nil, &zero},
		{"read", "n:file:a", "node", "", "reader", "", nil, nil},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestHubChunksAndCompaction(t *testing.T) {
	s := newStore(t, Options{})
	const n = 1000
	for batch := range 10 {
		mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error {
			for i := range n / 10 {
				if err := tx.PutEdge(EdgePut{Src: "hub", Rel: "calls", Dst: fmt.Sprint("leaf", batch*n/10+i)}); err != nil {
					return err
				}
			}
			return nil
		})
	}
	// delete half, then overwrite a quarter
	mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error {
		for i := 0; i < n; i += 2 {
			if err := tx.DeleteEdge("hub", "calls", fmt.Sprint("leaf", i)); err != nil {
				return err
			}
		}
		return nil
	})
	st, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.AdjacencyChunks < n/adjacency.MaxChunkEntries || st.Edges != n/2 || st.Tombstones != n { // both lists
		t.Fatalf("stats %+v", st)
	}
	rep := mustCheck(t, s)
	if len(rep.Warnings) == 0 {
		t.Errorf("no tombstone accumulation warning with %d tombstones of %d entries", st.Tombstones, st.AdjacencyEntries)
	}
	// Keeping all history, Compact drops nothing but packs the chunks.
	keep, err := s.Compact()
	if err != nil {
		t.Fatal(err)
	}
	if keep.EntriesAfter != keep.EntriesBefore || keep.ChunksAfter > keep.ChunksBefore || keep.HistDropped != 0 {
		t.Errorf("keep-all compaction: %+v", keep)
	}
	mustCheck(t, s)
	if err := s.SetRetention(1); err != nil {
		t.Fatal(err)
	}
	cs, err := s.Compact()
	if err != nil {
		t.Fatal(err)
	}
	if cs.EntriesAfter != 2*(n/2) || cs.EntriesBefore != 2*(n+n/2) { // out and in
		t.Errorf("compact stats %+v", cs)
	}
	st2, _ := s.Stats()
	if st2.Tombstones != 0 || st2.Edges != n/2 || st2.Horizon != 11 || len(st2.Warnings) != 0 {
		t.Errorf("after compaction: %+v", st2)
	}
	err = s.View(func(r *ReadTxn) error {
		_, err := r.GetOut("hub", "", AtRevision(10))
		wantErr(t, err, ErrBeforeHorizon)
		out, err := r.GetOut("hub", "calls", AtRevision(11))
		if len(out) != n/2 {
			t.Errorf("%d edges at the horizon, want %d", len(out), n/2)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestUnwritableDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores permissions")
	}
	dir := t.TempDir()
	s, err := Init(dir, Options{MapSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	os.Chmod(filepath.Join(dir, "lock.mdb"), 0o444)
	defer os.Chmod(filepath.Join(dir, "lock.mdb"), 0o644)
	_, err = Open(dir, Options{ReadOnly: true})
	wantErr(t, err, ErrReadOnly)
}

func TestOpenForeignPaths(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, []byte("MEMCTLSN"), 0o644)
	_, err := Open(file, Options{})
	wantErr(t, err, ErrNotExist)
	for name, content := range map[string][]byte{"empty": nil, "foreign": bytes.Repeat([]byte("not lmdb "), 1000)} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "data.mdb"), content, 0o644)
		for _, ro := range []bool{false, true} {
			_, err := Open(dir, Options{ReadOnly: ro})
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s data.mdb (read-only %v): %v, want ErrCorrupt", name, ro, err)
			}
		}
	}
}

func TestAtTimeBeyondInt64Nanoseconds(t *testing.T) {
	s := newStore(t, Options{})
	c := putEdge(t, s, "a", "calls", "b")
	err := s.View(func(r *ReadTxn) error {
		for _, at := range []string{"2262-04-12T00:00:00Z", "9999-12-31T23:59:59Z"} {
			tm, _ := time.Parse(time.RFC3339, at)
			rev, err := r.Resolve(AtTime(tm))
			if err != nil || rev != c.Rev {
				t.Errorf("Resolve(AtTime(%s)) = %d, %v; want %d", at, rev, err, c.Rev)
			}
		}
		_, err := r.Resolve(AtTime(time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)))
		wantErr(t, err, ErrNotFound)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestScanOutAllocatesPerScanNotPerEntry: ScanOut decodes straight from
// LMDB's memory; its allocations do not grow with the degree.
func TestScanOutAllocatesPerScanNotPerEntry(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	s := newStore(t, Options{})
	mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error {
		for i := range 1000 {
			if err := tx.PutEdge(EdgePut{Src: "hub", Rel: "calls", Dst: fmt.Sprint("d", i)}); err != nil {
				return err
			}
			if i < 10 {
				if err := tx.PutEdge(EdgePut{Src: "leaf", Rel: "calls", Dst: fmt.Sprint("d", i)}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	allocs := func(src string, want int) float64 {
		return testing.AllocsPerRun(50, func() {
			n := 0
			s.View(func(r *ReadTxn) error {
				return r.ScanOut(IDOf(src), 0, At{}, func(EdgeRef) bool { n++; return true })
			})
			if n != want {
				t.Fatalf("scanned %d of %s, want %d", n, src, want)
			}
		})
	}
	leaf, hub := allocs("leaf", 10), allocs("hub", 1000)
	// A constant difference is allowed (e.g. lmdb-go allocates the
	// not-found error when the hub's list ends the keyspace).
	if hub > leaf+2 {
		t.Errorf("ScanOut allocates %.0f times for degree 1000, %.0f for degree 10", hub, leaf)
	}
}

// TestLargeCompressedValues: history and log values larger than the zstd
// window (8 MiB) round-trip through the bounded decoder.
func TestLargeCompressedValues(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("compresses 10 MiB twice (half a minute under -race)")
	}
	s := newStore(t, Options{MapSize: 256 << 20})
	big := make([]byte, 0, 10<<20)
	big = append(big, '"')
	for i := 0; len(big) < 10<<20; i++ {
		big = fmt.Appendf(big, "%d,", i*7919%1000003)
	}
	big = append(big, '"')
	c1 := mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error {
		return tx.PutNode(NodePut{Key: "doc:big", Payload: big})
	})
	mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error {
		return tx.PutNode(NodePut{Key: "doc:big", Payload: json.RawMessage(`"small"`)})
	})
	err := s.View(func(r *ReadTxn) error {
		n, err := r.GetNode("doc:big", AtRevision(c1.Rev))
		if err != nil {
			return err
		}
		if !bytes.Equal(n.Payload, big) {
			t.Errorf("old version read back with %d bytes, want %d", len(n.Payload), len(big))
		}
		ops := 0
		return r.DiffSince(AtRevision(0), DiffFilter{}, func(op Op) error {
			if ops++; ops == 1 && !bytes.Equal(op.Payload, big) {
				t.Errorf("log payload differs")
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRelationFlagBits: bits 2–3 of a relation value's flags are its role;
// any higher bit is corruption, in decode and in check.
func TestRelationFlagBits(t *testing.T) {
	for flags, ok := range map[byte]bool{0x00: true, 0x0f: true, 0x0c: true, 0x10: false, 0x80: false} {
		v := sealValue(append(append(binary.LittleEndian.AppendUint32([]byte{relFormatV2, flags}, math.Float32bits(1)), 0), "x"...))
		r, err := decodeRel(11, v)
		if (err == nil) != ok {
			t.Errorf("flags %#x: %+v, %v; want ok=%v", flags, r, err, ok)
		}
		if ok && r.Role != roles.Role(flags>>2) {
			t.Errorf("flags %#x: role %v", flags, r.Role)
		}
	}
}

// dbEntries is the number of entries dbi holds.
func dbEntries(t testing.TB, s *Store, dbi lmdb.DBI) uint64 {
	t.Helper()
	var n uint64
	if err := s.view(func(txn *lmdb.Txn) error {
		st, err := txn.Stat(dbi)
		if st != nil {
			n = st.Entries
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return n
}
