package fuzz

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/memctl/memctl/lmdbstore"
)

// The differential target decodes a sequence of transactions from the fuzz
// input, applies it to a real store and to model (plain maps, one full copy
// per revision), and then compares every read the store offers at every
// readable revision: nodes, out- and in-edges (all relations and each one),
// kv entries and listings, point-in-time by revision and by time,
// diff-since from every revision, and Check.

// The model's universe is small so that operations collide often.
var (
	diffNodeKeys = []string{"a:0", "a:1", "b:2", "b:3", "c:4"}
	diffRels     = []struct {
		name   string
		weight float32
	}{{"calls", 1}, {"defines", 1}, {"owns", 0.5}}
	diffNS       = []string{"n1", "n2"}
	diffKVKeys   = []string{"k0", "k1"}
	diffPayloads = []string{`{"v":1}`, `[1,2,3]`, ``, `"s"`}
	diffWeights  = []float32{0, 0.5, 2}
)

const diffScope = "s"

type mNode struct {
	Type, Payload   string
	CreatedRev, Rev lmdbstore.Revision
}

type mEdgeKey struct{ Src, Rel, Dst string }

type mEdge struct {
	Weight float32
	Rev    lmdbstore.Revision
}

type mKVKey struct{ NS, Key string }

type mKV struct {
	Payload string
	Rev     lmdbstore.Revision
}

type mState struct {
	nodes map[string]mNode
	edges map[mEdgeKey]mEdge
	kvs   map[mKVKey]mKV
}

func (s mState) clone() mState {
	return mState{maps.Clone(s.nodes), maps.Clone(s.edges), maps.Clone(s.kvs)}
}

// mOp is the projection of a log operation the model predicts.
type mOp struct {
	Rev                  lmdbstore.Revision
	Kind                 string
	NodeKey              string
	Src, Rel, Dst        string
	Weight               float32
	Namespace, Key       string
	Payload              string
	Scope, RunID, TaskID string
}

// diffOp is one decoded operation.
type diffOp struct {
	kind    byte
	a, b, c int
}

const (
	dPutNode = iota
	dDelNode
	dPutEdge
	dDelEdge
	dPutKV
	dDelKV
	dCommit
	dAbort
	dCompact
	dNumKinds
)

// decodeDiffOps turns fuzz bytes into operations: one byte of kind, then
// up to three bytes of operands.
func decodeDiffOps(in []byte) []diffOp {
	var ops []diffOp
	at := func(i int) int {
		if i < len(in) {
			return int(in[i])
		}
		return 0
	}
	for i := 0; i < len(in) && len(ops) < 300; i += 4 {
		ops = append(ops, diffOp{kind: in[i] % dNumKinds, a: at(i + 1), b: at(i + 2), c: at(i + 3)})
	}
	return append(ops, diffOp{kind: dCommit})
}

var diffT0 = time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)

// revTime is the commit time of rev: the clock is frozen, so the store
// makes each commit 1ns after the previous one.
func revTime(rev lmdbstore.Revision) time.Time { return diffT0.Add(time.Duration(rev - 1)) }

func FuzzDifferential(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{
		dPutNode, 0, 0, 0, dPutEdge, 0, 0, 1, dPutEdge, 1, 2, 3, dCommit, 0, 0, 0,
		dPutNode, 0, 1, 0, dDelEdge, 0, 0, 1, dPutKV, 0, 0, 0, dCommit, 0, 0, 0,
		dCompact, 1, 0, 0, dDelNode, 0, 0, 0, dPutEdge, 0, 0, 1, dCommit, 0, 0, 0,
		dPutKV, 0, 0, 1, dAbort, 0, 0, 0, dDelKV, 0, 0, 0, dCommit, 0, 0, 0,
	})
	f.Add([]byte{
		dPutEdge, 0, 0, 1, dDelEdge, 0, 0, 1, dPutEdge, 0, 0, 1, dCommit, 1, 1, 1,
		dCompact, 2, 0, 0, dPutEdge, 0, 0, 2, dCommit, 0, 0, 0, dPutEdge, 0, 0, 3, dCommit, 0, 0, 0,
		dDelNode, 1, 0, 0, dPutNode, 1, 2, 0, dDelNode, 1, 0, 0, dCommit, 0, 0, 0, dCompact, 1, 0, 0,
	})
	f.Fuzz(func(t *testing.T, in []byte) {
		defer watchdog(hangLimit)()
		runDifferential(t, decodeDiffOps(in))
	})
}

func runDifferential(t *testing.T, ops []diffOp) {
	s, err := lmdbstore.Init(t.TempDir(), lmdbstore.Options{NoSync: true, MapSize: 32 << 20,
		Clock: func() time.Time { return diffT0 }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Revision 1 registers the custom relation.
	if _, err := s.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
		_, err := tx.AddRelation(lmdbstore.Relation{Name: "owns", DefaultWeight: 0.5})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	empty := mState{map[string]mNode{}, map[mEdgeKey]mEdge{}, map[mKVKey]mKV{}}
	states := []mState{empty, empty} // index: revision
	logOps := []mOp{{Rev: 1, Kind: "add_rel", Rel: "owns", Weight: 0.5}}
	var horizon, retain uint64

	var pending []diffOp
	for _, op := range ops {
		switch op.kind {
		case dCommit, dAbort:
			rev := lmdbstore.Revision(len(states))
			meta := lmdbstore.WriteMeta{Scope: diffScope, RunID: fmt.Sprint("run", rev%2), TaskID: fmt.Sprint("task", rev%3)}
			work := states[len(states)-1].clone()
			var txOps []mOp
			wantErrs := applyModel(work, rev, pending, meta, &txOps)
			c, err := s.Update(meta, func(tx *lmdbstore.WriteTxn) error {
				for i, op := range pending {
					err := applyStore(tx, op)
					if !errors.Is(err, wantErrs[i]) || (err == nil) != (wantErrs[i] == nil) {
						return fmt.Errorf("op %d %+v: store says %v, model %v", i, op, err, wantErrs[i])
					}
				}
				if op.kind == dAbort {
					return errAbortTxn
				}
				return nil
			})
			pending = nil
			if op.kind == dAbort {
				if !errors.Is(err, errAbortTxn) {
					t.Fatalf("aborted transaction: %v", err)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(txOps) == 0 {
				if c.Rev != 0 {
					t.Fatalf("transaction with no effective operation committed revision %d", c.Rev)
				}
				continue
			}
			if c.Rev != rev || c.Ops != len(txOps) || !c.Time.Equal(revTime(rev)) {
				t.Fatalf("commit %+v, want rev %d with %d ops at %s", c, rev, len(txOps), revTime(rev))
			}
			states = append(states, work)
			logOps = append(logOps, txOps...)
			// With a retention, every commit moves the horizon (SPEC.md §2).
			if latest := uint64(len(states) - 1); retain > 0 && latest >= retain && latest-retain+1 > horizon {
				horizon = latest - retain + 1
			}
		case dCompact:
			n := uint64(op.a % 4)
			if n != retain {
				if err := s.SetRetention(n); err != nil {
					t.Fatal(err)
				}
				retain = n
			}
			if _, err := s.Compact(); err != nil {
				t.Fatal(err)
			}
			latest := uint64(len(states) - 1)
			if retain > 0 && latest >= retain && latest-retain+1 > horizon {
				horizon = latest - retain + 1
			}
		default:
			pending = append(pending, op)
		}
	}
	compareStore(t, s, states, logOps, lmdbstore.Revision(horizon))
	rep, err := s.Check()
	if err != nil || len(rep.Problems) > 0 {
		t.Fatalf("check: %v %v", err, rep.Problems)
	}
}

var errAbortTxn = errors.New("abort requested by the test")

// applyModel applies ops to work as revision rev and returns, per op, the
// error the store must return (nil or ErrNotFound).
func applyModel(work mState, rev lmdbstore.Revision, ops []diffOp, meta lmdbstore.WriteMeta, log *[]mOp) []error {
	errs := make([]error, len(ops))
	add := func(o mOp) {
		o.Rev, o.Scope, o.RunID, o.TaskID = rev, meta.Scope, meta.RunID, meta.TaskID
		*log = append(*log, o)
	}
	for i, op := range ops {
		switch op.kind {
		case dPutNode:
			key := diffNodeKeys[op.a%len(diffNodeKeys)]
			p := diffPayloads[op.b%len(diffPayloads)]
			typ, _, _ := strings.Cut(key, ":")
			n := mNode{Type: typ, Payload: p, CreatedRev: rev, Rev: rev}
			if old, ok := work.nodes[key]; ok {
				n.CreatedRev = old.CreatedRev
			}
			work.nodes[key] = n
			add(mOp{Kind: "put_node", NodeKey: key, Payload: p})
		case dDelNode:
			key := diffNodeKeys[op.a%len(diffNodeKeys)]
			if _, ok := work.nodes[key]; !ok {
				errs[i] = lmdbstore.ErrNotFound
				continue
			}
			delete(work.nodes, key)
			add(mOp{Kind: "del_node", NodeKey: key})
		case dPutEdge:
			k, w := edgeOperands(op)
			rel := diffRels[op.b%len(diffRels)]
			if w == 0 {
				w = rel.weight
			}
			work.edges[k] = mEdge{Weight: w, Rev: rev}
			add(mOp{Kind: "put_edge", Src: k.Src, Rel: k.Rel, Dst: k.Dst, Weight: w})
		case dDelEdge:
			k, _ := edgeOperands(op)
			if _, ok := work.edges[k]; !ok {
				errs[i] = lmdbstore.ErrNotFound
				continue
			}
			delete(work.edges, k)
			add(mOp{Kind: "del_edge", Src: k.Src, Rel: k.Rel, Dst: k.Dst})
		case dPutKV:
			k := kvOperands(op)
			p := diffPayloads[op.c%(len(diffPayloads)-1)] // never empty: required
			if p == "" {
				p = "null"
			}
			work.kvs[k] = mKV{Payload: p, Rev: rev}
			add(mOp{Kind: "put_kv", Namespace: k.NS, Key: k.Key, Payload: p})
		case dDelKV:
			k := kvOperands(op)
			if _, ok := work.kvs[k]; !ok {
				errs[i] = lmdbstore.ErrNotFound
				continue
			}
			delete(work.kvs, k)
			add(mOp{Kind: "del_kv", Namespace: k.NS, Key: k.Key})
		}
	}
	return errs
}

func edgeOperands(op diffOp) (mEdgeKey, float32) {
	return mEdgeKey{
		Src: diffNodeKeys[op.a%len(diffNodeKeys)],
		Rel: diffRels[op.b%len(diffRels)].name,
		Dst: diffNodeKeys[op.c%len(diffNodeKeys)],
	}, diffWeights[(op.b/len(diffRels))%len(diffWeights)]
}

func kvOperands(op diffOp) mKVKey {
	return mKVKey{NS: diffNS[op.a%len(diffNS)], Key: diffKVKeys[op.b%len(diffKVKeys)]}
}

func applyStore(tx *lmdbstore.WriteTxn, op diffOp) error {
	switch op.kind {
	case dPutNode:
		p := diffPayloads[op.b%len(diffPayloads)]
		return tx.PutNode(lmdbstore.NodePut{Key: diffNodeKeys[op.a%len(diffNodeKeys)], Payload: json.RawMessage(p)})
	case dDelNode:
		return tx.DeleteNode(diffNodeKeys[op.a%len(diffNodeKeys)])
	case dPutEdge:
		k, w := edgeOperands(op)
		return tx.PutEdge(lmdbstore.EdgePut{Src: k.Src, Rel: k.Rel, Dst: k.Dst, Weight: w})
	case dDelEdge:
		k, _ := edgeOperands(op)
		return tx.DeleteEdge(k.Src, k.Rel, k.Dst)
	case dPutKV:
		k := kvOperands(op)
		p := diffPayloads[op.c%(len(diffPayloads)-1)]
		if p == "" {
			p = "null"
		}
		return tx.PutKV(lmdbstore.KVPut{Scope: diffScope, Namespace: k.NS, Key: k.Key, Payload: json.RawMessage(p)})
	case dDelKV:
		k := kvOperands(op)
		return tx.DeleteKV(diffScope, k.NS, k.Key)
	}
	return fmt.Errorf("bad op %d", op.kind)
}

// view is what one read of the store or the model returns, in a form
// go-cmp can diff.
type view struct {
	Nodes map[string]mNode
	Out   map[string][]string // key -> "rel dst weight rev", per relation filter too
	In    map[string][]string
	KVs   map[mKVKey]mKV
	Lists map[string][]string // ns -> "key=payload@rev"
}

func modelView(st mState) view {
	v := view{Nodes: st.nodes, Out: map[string][]string{}, In: map[string][]string{}, KVs: st.kvs, Lists: map[string][]string{}}
	if len(v.Nodes) == 0 {
		v.Nodes = nil
	}
	if len(v.KVs) == 0 {
		v.KVs = nil
	}
	relIDs := map[string]lmdbstore.RelID{"calls": 3, "defines": 1, "owns": 11}
	type sortable struct {
		rel  lmdbstore.RelID
		peer lmdbstore.NodeID
		s    string
	}
	out, in := map[string][]sortable{}, map[string][]sortable{}
	for k, e := range st.edges {
		rel := relIDs[k.Rel]
		for _, filter := range []string{"", k.Rel} {
			out[k.Src+"|"+filter] = append(out[k.Src+"|"+filter], sortable{rel, lmdbstore.IDOf(k.Dst), fmt.Sprintf("%s %s %g %d", k.Rel, k.Dst, e.Weight, e.Rev)})
			in[k.Dst+"|"+filter] = append(in[k.Dst+"|"+filter], sortable{rel, lmdbstore.IDOf(k.Src), fmt.Sprintf("%s %s %g %d", k.Rel, k.Src, e.Weight, e.Rev)})
		}
	}
	flatten := func(m map[string][]sortable, dst map[string][]string) {
		for k, list := range m {
			sort.Slice(list, func(i, j int) bool {
				if list[i].rel != list[j].rel {
					return list[i].rel < list[j].rel
				}
				return list[i].peer < list[j].peer
			})
			for _, x := range list {
				dst[k] = append(dst[k], x.s)
			}
		}
	}
	flatten(out, v.Out)
	flatten(in, v.In)
	keys := make([]mKVKey, 0, len(st.kvs))
	for k := range st.kvs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Key < keys[j].Key })
	for _, k := range keys {
		v.Lists[k.NS] = append(v.Lists[k.NS], fmt.Sprintf("%s=%s@%d", k.Key, st.kvs[k].Payload, st.kvs[k].Rev))
	}
	return v
}

func storeView(t *testing.T, r *lmdbstore.ReadTxn, at lmdbstore.At, rev lmdbstore.Revision) view {
	t.Helper()
	v := view{Nodes: map[string]mNode{}, Out: map[string][]string{}, In: map[string][]string{}, KVs: map[mKVKey]mKV{}, Lists: map[string][]string{}}
	for _, key := range diffNodeKeys {
		n, err := r.GetNode(key, at)
		switch {
		case err == nil:
			if n.Key != key || n.ID != lmdbstore.IDOf(key) || !n.UpdatedTS.Equal(revTime(n.Rev)) || !n.CreatedTS.Equal(revTime(n.CreatedRev)) {
				t.Fatalf("rev %d: node %q: bad identity or times: %+v", rev, key, n)
			}
			v.Nodes[key] = mNode{Type: n.Type, Payload: string(n.Payload), CreatedRev: n.CreatedRev, Rev: n.Rev}
		case !errors.Is(err, lmdbstore.ErrNotFound):
			t.Fatalf("rev %d: GetNode(%q): %v", rev, key, err)
		}
		for _, filter := range []string{"", "calls", "defines", "owns"} {
			out, err := r.GetOut(key, filter, at)
			if err != nil {
				t.Fatalf("rev %d: GetOut(%q, %q): %v", rev, key, filter, err)
			}
			for _, e := range out {
				dst, _ := r.KeyOf(e.Dst)
				rel, _ := r.RelationByID(e.Rel)
				v.Out[key+"|"+filter] = append(v.Out[key+"|"+filter], fmt.Sprintf("%s %s %g %d", rel.Name, dst, e.Weight, e.Rev))
			}
			in, err := r.GetIn(key, filter, at)
			if err != nil {
				t.Fatalf("rev %d: GetIn(%q, %q): %v", rev, key, filter, err)
			}
			for _, e := range in {
				src, _ := r.KeyOf(e.Src)
				rel, _ := r.RelationByID(e.Rel)
				v.In[key+"|"+filter] = append(v.In[key+"|"+filter], fmt.Sprintf("%s %s %g %d", rel.Name, src, e.Weight, e.Rev))
			}
		}
	}
	for _, ns := range diffNS {
		for _, key := range diffKVKeys {
			kv, err := r.GetKV(diffScope, ns, key, at)
			switch {
			case err == nil:
				if !kv.TS.Equal(revTime(kv.Rev)) {
					t.Fatalf("rev %d: kv %s/%s: ts %s for rev %d", rev, ns, key, kv.TS, kv.Rev)
				}
				v.KVs[mKVKey{ns, key}] = mKV{Payload: string(kv.Payload), Rev: kv.Rev}
			case !errors.Is(err, lmdbstore.ErrNotFound):
				t.Fatalf("rev %d: GetKV: %v", rev, err)
			}
		}
		list, err := r.ListKV(diffScope, ns, at)
		if err != nil {
			t.Fatalf("rev %d: ListKV: %v", rev, err)
		}
		for _, kv := range list {
			v.Lists[ns] = append(v.Lists[ns], fmt.Sprintf("%s=%s@%d", kv.Key, kv.Payload, kv.Rev))
		}
	}
	if len(v.Nodes) == 0 {
		v.Nodes = nil
	}
	if len(v.KVs) == 0 {
		v.KVs = nil
	}
	return v
}

func compareStore(t *testing.T, s *lmdbstore.Store, states []mState, logOps []mOp, horizon lmdbstore.Revision) {
	latest := lmdbstore.Revision(len(states) - 1)
	err := s.View(func(r *lmdbstore.ReadTxn) error {
		if got := r.Revision(); got != latest {
			t.Fatalf("store at revision %d, model at %d", got, latest)
		}
		if diff := cmp.Diff(modelView(states[latest]), storeView(t, r, lmdbstore.At{}, latest)); diff != "" {
			t.Fatalf("latest view (rev %d) differs (-model +store):\n%s", latest, diff)
		}
		for rev := lmdbstore.Revision(0); rev <= latest; rev++ {
			if rev < horizon {
				if _, err := r.GetNode(diffNodeKeys[0], lmdbstore.AtRevision(rev)); !errors.Is(err, lmdbstore.ErrBeforeHorizon) {
					t.Fatalf("rev %d below horizon %d: GetNode err %v, want ErrBeforeHorizon", rev, horizon, err)
				}
				if _, err := r.GetOut(diffNodeKeys[0], "", lmdbstore.AtRevision(rev)); !errors.Is(err, lmdbstore.ErrBeforeHorizon) {
					t.Fatalf("rev %d below horizon %d: GetOut err %v, want ErrBeforeHorizon", rev, horizon, err)
				}
			} else {
				want := modelView(states[rev])
				if diff := cmp.Diff(want, storeView(t, r, lmdbstore.AtRevision(rev), rev)); diff != "" {
					t.Fatalf("view at rev %d (horizon %d) differs (-model +store):\n%s", rev, horizon, diff)
				}
				if rev > 0 {
					if diff := cmp.Diff(want, storeView(t, r, lmdbstore.AtTime(revTime(rev)), rev)); diff != "" {
						t.Fatalf("view at the time of rev %d differs (-model +store):\n%s", rev, diff)
					}
				}
			}
			// diff-since works below the horizon too (the log is kept).
			var got []mOp
			if err := r.DiffSince(lmdbstore.AtRevision(rev), lmdbstore.DiffFilter{}, func(op lmdbstore.Op) error {
				if !op.TS.Equal(revTime(op.Rev)) {
					t.Fatalf("diff-since: op of rev %d at %s", op.Rev, op.TS)
				}
				got = append(got, mOp{Rev: op.Rev, Kind: op.Kind.String(), NodeKey: op.NodeKey, Src: op.Src, Rel: op.Rel, Dst: op.Dst,
					Weight: op.Weight, Namespace: op.Namespace, Key: op.Key, Payload: string(op.Payload),
					Scope: op.Scope, RunID: op.RunID, TaskID: op.TaskID})
				return nil
			}); err != nil {
				t.Fatalf("DiffSince(%d): %v", rev, err)
			}
			var want []mOp
			for _, op := range logOps {
				if op.Rev > rev {
					want = append(want, op)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("diff-since %d differs (-model +store):\n%s", rev, diff)
			}
		}
		// Filters: run0 only.
		var n, want int
		for _, op := range logOps {
			if op.RunID == "run0" {
				want++
			}
		}
		if err := r.DiffSince(lmdbstore.AtRevision(0), lmdbstore.DiffFilter{RunID: "run0"}, func(lmdbstore.Op) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Fatalf("diff-since run0: %d ops, model %d", n, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
