package storesnap_test

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/internal/testcmp"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/snapshot"
	"github.com/memctl/memctl/storesnap"
)

func newStore(t testing.TB) *lmdbstore.Store {
	t.Helper()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	n := 0
	s, err := lmdbstore.Init(filepath.Join(t.TempDir(), "db"), lmdbstore.Options{
		NoSync: true,
		Clock: func() time.Time {
			n++
			return base.Add(time.Duration(n) * time.Millisecond)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// op is one write; a commit is a list of ops.
type op struct {
	kind     string // node, delnode, edge, deledge, rel, compact
	key      string
	typ      string
	payload  string
	scope    string
	src, dst string
	rel      string
	weight   float32
	bidir    bool
	inhibit  bool
}

func apply(t testing.TB, s *lmdbstore.Store, commit []op) {
	t.Helper()
	if len(commit) == 1 && commit[0].kind == "compact" {
		if _, err := s.Compact(); err != nil {
			t.Fatal(err)
		}
		return
	}
	_, err := s.Update(lmdbstore.WriteMeta{RunID: "run", TaskID: "task"}, func(tx *lmdbstore.WriteTxn) error {
		for _, o := range commit {
			var err error
			switch o.kind {
			case "node":
				err = tx.PutNode(lmdbstore.NodePut{Key: o.key, Type: o.typ, Payload: json.RawMessage(o.payload), Scope: o.scope})
			case "delnode":
				err = tx.DeleteNode(o.key)
			case "edge":
				err = tx.PutEdge(lmdbstore.EdgePut{Src: o.src, Rel: o.rel, Dst: o.dst, Weight: o.weight})
			case "deledge":
				err = tx.DeleteEdge(o.src, o.rel, o.dst)
			case "rel":
				_, err = tx.AddRelation(lmdbstore.Relation{Name: o.rel, DefaultWeight: o.weight, Bidirectional: o.bidir, Inhibitory: o.inhibit})
			}
			if err != nil && !isNotFound(err) {
				return fmt.Errorf("%+v: %w", o, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func isNotFound(err error) bool { return errors.Is(err, lmdbstore.ErrNotFound) }

var relNames = []string{"calls", "imports", "uses", "blocks"}

// randomHistory is a list of commits: relations first, then random node and
// edge puts and deletes, with compactions in between.
func randomHistory(rng *rand.Rand, commits int) [][]op {
	h := [][]op{{
		{kind: "rel", rel: "uses", weight: 0.5, bidir: true},
		{kind: "rel", rel: "blocks", weight: 0.25, inhibit: true},
	}}
	key := func() string { return fmt.Sprintf("%s:k%d", []string{"file", "sym", "dec"}[rng.IntN(3)], rng.IntN(25)) }
	for c := 0; c < commits; c++ {
		if rng.IntN(8) == 0 {
			h = append(h, []op{{kind: "compact"}})
			continue
		}
		var commit []op
		for k := 1 + rng.IntN(6); k > 0; k-- {
			switch r := rng.IntN(10); {
			case r < 4:
				var payload string
				switch rng.IntN(3) {
				case 1:
					payload = fmt.Sprintf(`{"v":%d}`, rng.IntN(50))
				case 2:
					payload = fmt.Sprintf(`{"text":%q}`, bytes.Repeat([]byte("abc "), 100+rng.IntN(50)))
				}
				commit = append(commit, op{kind: "node", key: key(), payload: payload, scope: []string{"", "repo"}[rng.IntN(2)]})
			case r < 5:
				commit = append(commit, op{kind: "delnode", key: key()})
			case r < 9:
				commit = append(commit, op{kind: "edge", src: key(), dst: key(), rel: relNames[rng.IntN(len(relNames))], weight: float32(rng.IntN(5)) / 4})
			default:
				commit = append(commit, op{kind: "deledge", src: key(), dst: key(), rel: relNames[rng.IntN(len(relNames))]})
			}
		}
		h = append(h, commit)
	}
	return h
}

// storeView is what the store says at one revision, in the reader's terms.
type viewNode struct {
	ID                   uint64
	Key, Type, Scope     string
	RunID, TaskID        string
	CreatedTS, UpdatedTS int64
	CreatedRev, Rev      uint64
	Payload              string
	Missing              bool
	Out, In              []viewEdge
}

type viewEdge struct {
	Peer   uint64
	Rel    uint32
	Weight float32
	Rev    uint64
	TS     int64
}

func sortView(es []viewEdge) {
	slices.SortFunc(es, func(a, b viewEdge) int {
		return cmp.Or(cmp.Compare(a.Rel, b.Rel), cmp.Compare(a.Peer, b.Peer))
	})
}

func storeAt(t *testing.T, s *lmdbstore.Store, rev lmdbstore.Revision) map[uint64]*viewNode {
	out := map[uint64]*viewNode{}
	at := lmdbstore.AtRevision(rev)
	err := s.View(func(r *lmdbstore.ReadTxn) error {
		get := func(id lmdbstore.NodeID) *viewNode {
			if n, ok := out[uint64(id)]; ok {
				return n
			}
			key, err := r.KeyOf(id)
			if err != nil {
				t.Fatal(err)
			}
			n := &viewNode{ID: uint64(id), Key: key, Missing: true}
			out[uint64(id)] = n
			return n
		}
		if err := r.ScanNodes(at, func(n lmdbstore.Node) error {
			out[uint64(n.ID)] = &viewNode{ID: uint64(n.ID), Key: n.Key, Type: n.Type, Scope: n.Scope, RunID: n.RunID, TaskID: n.TaskID,
				CreatedTS: n.CreatedTS.UnixNano(), UpdatedTS: n.UpdatedTS.UnixNano(), CreatedRev: uint64(n.CreatedRev), Rev: uint64(n.Rev),
				Payload: string(n.Payload)}
			return nil
		}); err != nil {
			return err
		}
		if err := r.ScanEdges(at, func(e lmdbstore.Edge) error {
			get(e.Src)
			get(e.Dst)
			return nil
		}); err != nil {
			return err
		}
		// Out- and in-lists from the store's own adjacency scans (its out
		// and in keyspaces), so the reverse CSR is checked against the
		// store's in-lists, not against the forward edges transposed.
		for id, n := range out {
			var scanErr error
			edge := func(list *[]viewEdge) func(lmdbstore.EdgeRef) bool {
				return func(e lmdbstore.EdgeRef) bool {
					tm, err := r.RevisionTime(e.Rev)
					if err != nil {
						scanErr = err
						return false
					}
					*list = append(*list, viewEdge{uint64(e.Peer), uint32(e.Rel), e.Weight, uint64(e.Rev), tm.UnixNano()})
					return true
				}
			}
			if err := r.ScanOut(lmdbstore.NodeID(id), 0, at, edge(&n.Out)); err != nil {
				return err
			}
			if err := r.ScanIn(lmdbstore.NodeID(id), 0, at, edge(&n.In)); err != nil {
				return err
			}
			if scanErr != nil {
				return scanErr
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range out {
		sortView(n.Out)
		sortView(n.In)
	}
	return out
}

func snapshotView(t *testing.T, b []byte) map[uint64]*viewNode {
	g, err := csr.FromBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Verify(); err != nil {
		t.Fatal(err)
	}
	out := map[uint64]*viewNode{}
	for i := uint32(0); i < uint32(g.NumNodes()); i++ {
		n, err := g.Node(i)
		if err != nil {
			t.Fatal(err)
		}
		p, err := g.Payload(i)
		if err != nil {
			t.Fatal(err)
		}
		v := &viewNode{ID: n.ID, Key: n.Key, Type: n.Type, Scope: n.Scope, RunID: n.RunID, TaskID: n.TaskID,
			CreatedTS: n.CreatedTS, UpdatedTS: n.UpdatedTS, CreatedRev: n.CreatedRev, Rev: n.Rev, Payload: string(p), Missing: n.Missing}
		tg, rels, ws, _ := g.Out(i)
		revs, _ := g.OutRevs(i)
		for k := range tg {
			id, _ := g.NodeID(tg[k])
			ts, _ := g.RevisionTime(revs[k])
			v.Out = append(v.Out, viewEdge{id, rels[k], ws[k], revs[k], ts})
		}
		srcs, rels, ws, _ := g.In(i)
		for k := range srcs {
			id, _ := g.NodeID(srcs[k])
			rev, _, _ := g.EdgeRev(srcs[k], rels[k], i)
			ts, _ := g.RevisionTime(rev)
			v.In = append(v.In, viewEdge{id, rels[k], ws[k], rev, ts})
		}
		sortView(v.Out)
		sortView(v.In)
		out[n.ID] = v
	}
	return out
}

func latestRev(t *testing.T, s *lmdbstore.Store) lmdbstore.Revision {
	var rev lmdbstore.Revision
	if err := s.View(func(r *lmdbstore.ReadTxn) error { rev = r.Revision(); return nil }); err != nil {
		t.Fatal(err)
	}
	return rev
}

func export(t *testing.T, s *lmdbstore.Store, at lmdbstore.At, logical bool) []byte {
	t.Helper()
	// A fixed valid-at: two exports of one state are then the same bytes.
	b, err := storesnap.ExportBytesFiltered(s, at, lmdbstore.StatusFilter{ValidAt: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}, snapshot.WriterOptions{Logical: logical})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func logicalHash(t *testing.T, b []byte) [32]byte {
	f, err := snapshot.FromBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	h, err := f.LogicalHash()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestRoundTripRandomHistories: store → export at a random revision →
// reader equals the store's nodes, out-edges and in-edges at that revision.
func TestRoundTripRandomHistories(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for iter := 0; iter < 6; iter++ {
		s := newStore(t)
		for _, c := range randomHistory(rng, 40) {
			apply(t, s, c)
		}
		last := latestRev(t, s)
		// The latest view and the latest revision named explicitly agree.
		if !bytes.Equal(export(t, s, lmdbstore.At{}, false), export(t, s, lmdbstore.AtRevision(last), false)) {
			t.Fatalf("history %d: export of the latest view differs from the export at revision %d", iter, last)
		}
		for k := 0; k < 5; k++ {
			rev := lmdbstore.Revision(rng.IntN(int(last) + 1))
			want := storeAt(t, s, rev)
			got := snapshotView(t, export(t, s, lmdbstore.AtRevision(rev), false))
			if diff := gocmp.Diff(want, got, testcmp.EquateEmpty()); diff != "" {
				t.Fatalf("history %d, revision %d (-store +snapshot):\n%s", iter, rev, diff)
			}
		}
	}
}

// TestPointInTimeEqualsReplay: the export at revision R equals the export
// of a store that only saw the history up to R (logical bytes).
func TestPointInTimeEqualsReplay(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for iter := 0; iter < 4; iter++ {
		h := randomHistory(rng, 30)
		s := newStore(t)
		revAfter := []lmdbstore.Revision{} // revision after each commit prefix
		for _, c := range h {
			apply(t, s, c)
			revAfter = append(revAfter, latestRev(t, s))
		}
		cut := rng.IntN(len(h))
		replay := newStore(t)
		for _, c := range h[:cut+1] {
			apply(t, replay, c)
		}
		a := export(t, s, lmdbstore.AtRevision(revAfter[cut]), true)
		b := export(t, replay, lmdbstore.At{}, true)
		if !bytes.Equal(a, b) {
			t.Fatalf("history %d: export at revision %d differs from the replayed store's", iter, revAfter[cut])
		}
	}
}

// TestThreeInsertionOrders builds one graph in three orders (with deletes
// and compactions in between) and compares SHA-256 of the logical exports
// and the logical hash of the normal exports.
func TestThreeInsertionOrders(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	var nodes, edges []op
	for i := 0; i < 40; i++ {
		nodes = append(nodes, op{kind: "node", key: fmt.Sprintf("file:n%02d", i), payload: fmt.Sprintf(`{"i":%d}`, i), scope: "repo"})
	}
	nodes = append(nodes, op{kind: "node", key: "doc:big", payload: fmt.Sprintf(`{"t":%q}`, bytes.Repeat([]byte("memctl "), 200))})
	for i := 0; i < 120; i++ {
		edges = append(edges, op{kind: "edge", src: fmt.Sprintf("file:n%02d", rng.IntN(40)), dst: fmt.Sprintf("file:n%02d", rng.IntN(45)),
			rel: relNames[rng.IntN(len(relNames))], weight: float32(1+rng.IntN(4)) / 4})
	}
	rels := []op{
		{kind: "rel", rel: "uses", weight: 0.5, bidir: true},
		{kind: "rel", rel: "blocks", weight: 0.25, inhibit: true},
	}
	build := func(order int) *lmdbstore.Store {
		s := newStore(t)
		apply(t, s, rels)
		r := rand.New(rand.NewPCG(uint64(order), 99))
		ns, es := slices.Clone(nodes), slices.Clone(edges)
		r.Shuffle(len(ns), func(i, j int) { ns[i], ns[j] = ns[j], ns[i] })
		r.Shuffle(len(es), func(i, j int) { es[i], es[j] = es[j], es[i] })
		all := append(ns, es...)
		if order == 2 {
			all = append(es, ns...) // edges before their nodes exist
		}
		for len(all) > 0 {
			k := min(len(all), 1+r.IntN(15))
			batch := all[:k]
			all = all[k:]
			// Noise that cancels: a temporary node and edge, deleted later;
			// an edge written with another weight first.
			noise := []op{
				{kind: "node", key: fmt.Sprintf("tmp:%d", len(all)), payload: `{"tmp":true}`},
				{kind: "edge", src: "file:n00", rel: "calls", dst: fmt.Sprintf("tmp:%d", len(all)), weight: 1},
			}
			apply(t, s, append(noise, batch...))
			apply(t, s, []op{
				{kind: "deledge", src: "file:n00", rel: "calls", dst: fmt.Sprintf("tmp:%d", len(all))},
				{kind: "delnode", key: fmt.Sprintf("tmp:%d", len(all))},
			})
			if r.IntN(3) == 0 {
				apply(t, s, []op{{kind: "compact"}})
			}
		}
		// Re-put every edge and node at the end, so a write order that put
		// an edge twice with different weights ends in the same state.
		apply(t, s, edges)
		apply(t, s, nodes)
		return s
	}
	var logicalSums [][32]byte
	var hashes [][32]byte
	var revs []uint64
	for order := 0; order < 3; order++ {
		s := build(order)
		logicalSums = append(logicalSums, sha256.Sum256(export(t, s, lmdbstore.At{}, true)))
		normal := export(t, s, lmdbstore.At{}, false)
		hashes = append(hashes, logicalHash(t, normal))
		f, _ := snapshot.FromBytes(normal)
		revs = append(revs, f.Header().Revision)
	}
	if revs[0] == revs[1] && revs[1] == revs[2] {
		t.Log("all three orders ended at the same revision; the test still compares bytes")
	}
	for i := 1; i < 3; i++ {
		if logicalSums[i] != logicalSums[0] {
			t.Fatalf("order %d: SHA-256 of the logical export differs", i)
		}
		if hashes[i] != hashes[0] {
			t.Fatalf("order %d: snapshot hash of the normal export differs", i)
		}
	}
}

// TestExportImportExport: export → import into a fresh store → export is
// byte-identical for logical exports and hash-identical otherwise.
func TestExportImportExport(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	s := newStore(t)
	for _, c := range randomHistory(rng, 60) {
		apply(t, s, c)
	}
	first := export(t, s, lmdbstore.At{}, false)
	firstLogical := export(t, s, lmdbstore.At{}, true)
	f, err := snapshot.FromBytes(first)
	if err != nil {
		t.Fatal(err)
	}
	fresh := newStore(t)
	stats, err := storesnap.Import(f, fresh, storesnap.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if stats.Edges != f.NumEdges() {
		t.Fatalf("imported %d edges of %d", stats.Edges, f.NumEdges())
	}
	if again := export(t, fresh, lmdbstore.At{}, true); !bytes.Equal(again, firstLogical) {
		t.Fatal("logical export after import differs")
	}
	if logicalHash(t, export(t, fresh, lmdbstore.At{}, false)) != logicalHash(t, first) {
		t.Fatal("snapshot hash after import differs")
	}
	mustCheck(t, fresh)
}

func mustCheck(t *testing.T, s *lmdbstore.Store) {
	t.Helper()
	rep, err := s.Check()
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) > 0 {
		t.Fatalf("check after import: %v", rep.Problems)
	}
}

// TestImportHubsMatchesOrdinaryWrites: a graph with lists longer than a
// chunk (a hub with 700 in-edges, one with 300 out-edges) imported (one
// bulk load) has the logical hash of the store it came from and of the
// same operations written through ordinary transactions, and Check holds.
func TestImportHubsMatchesOrdinaryWrites(t *testing.T) {
	var ops []op
	for i := 0; i < 700; i++ {
		ops = append(ops, op{kind: "edge", src: fmt.Sprintf("sym:s%03d", i), rel: relNames[i%2], dst: "sym:hub"})
	}
	for i := 0; i < 300; i++ {
		ops = append(ops, op{kind: "edge", src: "file:big", rel: "calls", dst: fmt.Sprintf("sym:s%03d", i*2), weight: 0.5})
		ops = append(ops, op{kind: "node", key: fmt.Sprintf("sym:s%03d", i), payload: fmt.Sprintf(`{"b":%d,"a":"x"}`, i)})
	}
	src := newStore(t)
	for i := 0; i < len(ops); i += 97 {
		apply(t, src, ops[i:min(len(ops), i+97)])
	}
	first := export(t, src, lmdbstore.At{}, false)
	f, err := snapshot.FromBytes(first)
	if err != nil {
		t.Fatal(err)
	}
	imported := newStore(t)
	if _, err := storesnap.Import(f, imported, storesnap.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, imported)
	ordinary := newStore(t)
	apply(t, ordinary, ops)
	want := logicalHash(t, first)
	for name, s := range map[string]*lmdbstore.Store{"imported": imported, "ordinary": ordinary} {
		if got := logicalHash(t, export(t, s, lmdbstore.At{}, false)); got != want {
			t.Errorf("%s store: logical hash differs from the source's", name)
		}
	}
}

func TestExportFileAndEmptyStore(t *testing.T) {
	s := newStore(t)
	path := filepath.Join(t.TempDir(), "empty.snap")
	stats, rev, err := storesnap.Export(s, path, lmdbstore.At{}, snapshot.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rev != 0 || stats.Nodes != 0 {
		t.Fatalf("rev %d stats %+v", rev, stats)
	}
	g, err := csr.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Verify(); err != nil {
		t.Fatal(err)
	}
	if g.NumRelations() == 0 {
		t.Fatal("built-in relations not exported")
	}
}

// TestImportRefusesIrreproducibleRelations: relation ids a fresh store
// cannot give (a gap after the built-ins, a built-in with other attributes)
// fail with ErrImport and write nothing else.
func TestImportRefusesIrreproducibleRelations(t *testing.T) {
	builtins := func() []snapshot.RelationRecord {
		var out []snapshot.RelationRecord
		s := newStore(t)
		s.View(func(r *lmdbstore.ReadTxn) error {
			rels, _ := r.Relations()
			for _, rel := range rels {
				out = append(out, snapshot.RelationRecord{ID: uint32(rel.ID), Name: rel.Name, DefaultWeight: rel.DefaultWeight})
			}
			return nil
		})
		return out
	}
	cases := map[string]func([]snapshot.RelationRecord) []snapshot.RelationRecord{
		"gap after the built-ins": func(rs []snapshot.RelationRecord) []snapshot.RelationRecord {
			return append(rs, snapshot.RelationRecord{ID: uint32(len(rs) + 2), Name: "later", DefaultWeight: 1})
		},
		"built-in with another weight": func(rs []snapshot.RelationRecord) []snapshot.RelationRecord {
			rs[0].DefaultWeight = 0.5
			return rs
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			st := &snapshot.MemState{Rels: mutate(builtins()), NodeList: []snapshot.NodeRecord{{ID: 1, Key: "a:1", Type: "a"}}}
			b, _, err := snapshot.Write(st, snapshot.WriterOptions{Logical: true})
			if err != nil {
				t.Fatal(err)
			}
			f, _ := snapshot.FromBytes(b)
			fresh := newStore(t)
			if _, err := storesnap.Import(f, fresh, storesnap.ImportOptions{}); !errors.Is(err, storesnap.ErrImport) {
				t.Fatalf("err = %v, want ErrImport", err)
			}
			if latestRev(t, fresh) != 0 {
				t.Fatal("a refused import wrote something")
			}
		})
	}
}

// TestImportVerifiesBeforeWriting: with ImportOptions.Verify the snapshot
// is checked beside the load, and an import whose snapshot fails it writes
// nothing (not even the relations, which are written before the load) and
// returns the verification's error, whatever else failed; one that passes
// gives the store an import without it gives.
func TestImportVerifiesBeforeWriting(t *testing.T) {
	src := newStore(t)
	apply(t, src, []op{{kind: "rel", rel: "later", weight: 3}})
	var ops []op
	for i := range 50 {
		ops = append(ops, op{kind: "edge", src: fmt.Sprintf("sym:s%02d", i), rel: "later", dst: fmt.Sprintf("sym:s%02d", (i*7+1)%50)})
		ops = append(ops, op{kind: "node", key: fmt.Sprintf("sym:s%02d", i), payload: `{"a":1}`})
	}
	apply(t, src, ops)
	good := export(t, src, lmdbstore.At{}, false)
	// fwd_targets damaged: Verify fails on its CRC, and the load itself
	// may meet a target out of range.
	bad := bytes.Clone(good)
	f, err := snapshot.FromBytes(good)
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range f.Sections() {
		if sec.Kind == snapshot.KindFwdTargets {
			for i := range 8 {
				bad[sec.Offset+uint64(i)] ^= 0xff
			}
		}
	}
	errOther := errors.New("verification failed")
	for name, tc := range map[string]struct {
		data   []byte
		verify func(f *snapshot.File) func() error
		want   error
	}{
		"damaged file":         {bad, func(f *snapshot.File) func() error { return f.Verify }, snapshot.ErrCorrupt},
		"verification refuses": {good, func(*snapshot.File) func() error { return func() error { return errOther } }, errOther},
		"passes":               {good, func(f *snapshot.File) func() error { return f.Verify }, nil},
	} {
		t.Run(name, func(t *testing.T) {
			f, err := snapshot.FromBytes(tc.data)
			if err != nil {
				t.Fatal(err)
			}
			fresh := newStore(t)
			_, err = storesnap.Import(f, fresh, storesnap.ImportOptions{Verify: tc.verify(f)})
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				if logicalHash(t, export(t, fresh, lmdbstore.At{}, false)) != logicalHash(t, good) {
					t.Fatal("logical hash after a verified import differs")
				}
				mustCheck(t, fresh)
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if latestRev(t, fresh) != 0 {
				t.Fatal("an import that failed verification wrote something")
			}
		})
	}
}

// TestImportRefusedWithoutNewRelations: with only the store's own
// relations no relation write waits for the verification; the load is
// built beside it, and a verification that fails late still leaves
// nothing written, the store checking clean, and its error Import's.
func TestImportRefusedWithoutNewRelations(t *testing.T) {
	src := newStore(t)
	var ops []op
	for i := range 200 {
		ops = append(ops, op{kind: "node", key: fmt.Sprintf("sym:g%03d", i), payload: `{"a":1}`})
		ops = append(ops, op{kind: "edge", src: fmt.Sprintf("sym:g%03d", i), rel: "calls", dst: fmt.Sprintf("sym:g%03d", (i*7+1)%200)})
	}
	apply(t, src, ops)
	f, err := snapshot.FromBytes(export(t, src, lmdbstore.At{}, false))
	if err != nil {
		t.Fatal(err)
	}
	refused := errors.New("verification failed late")
	fresh := newStore(t)
	_, err = storesnap.Import(f, fresh, storesnap.ImportOptions{Verify: func() error {
		time.Sleep(100 * time.Millisecond) // the load is built first
		return refused
	}})
	if !errors.Is(err, refused) {
		t.Fatalf("err = %v, want the verification's", err)
	}
	if latestRev(t, fresh) != 0 {
		t.Fatal("a refused import wrote something")
	}
	mustCheck(t, fresh)
	// The same load with a verification that passes is the store's.
	again := newStore(t)
	if _, err := storesnap.Import(f, again, storesnap.ImportOptions{Verify: f.Verify}); err != nil {
		t.Fatal(err)
	}
	if latestRev(t, again) == 0 {
		t.Fatal("a verified import wrote nothing")
	}
}
