package lmdbstore

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// histOp is one applied operation of the model: what a version walk must
// report for the entity it touched.
type histOp struct {
	rev     Revision
	deleted bool
	run     string
	task    string
	payload string
}

// TestHistoryReads applies a random history (puts and deletes of a few
// nodes, edges and kv entries, one or more per revision, under varying runs
// and tasks), keeps the expected versions of each entity as it goes, and
// compares every history read with them.
func TestHistoryReads(t *testing.T) {
	s := newStore(t, Options{})
	r := rand.New(rand.NewPCG(7, 8))
	nodes := []string{"file:a.go", "file:b.go", "sym:a.F", "decision:x"}
	kvKeys := []string{"errors", "naming", "tests"}
	nodeHist := map[string][]histOp{}
	edgeHist := map[[3]string][]histOp{}
	kvHist := map[string][]histOp{}
	liveNode := map[string]bool{}
	liveEdge := map[[3]string]bool{}
	liveKV := map[string]bool{}
	var headers []LogHeader
	seq := 0 // every payload is new, so no put is a no-op
	// record keeps the last version of an entity per revision (a second
	// write in one revision replaces the first).
	record := func(h []histOp, op histOp) []histOp {
		if n := len(h); n > 0 && h[n-1].rev == op.rev {
			h[n-1] = op
			return h
		}
		return append(h, op)
	}
	for rev := Revision(1); rev <= 60; rev++ {
		meta := WriteMeta{RunID: fmt.Sprintf("run-%d", rev/20), TaskID: fmt.Sprintf("task-%d", rev%3)}
		c := mustUpdate(t, s, meta, func(tx *WriteTxn) error {
			for range 1 + r.IntN(3) {
				seq++
				payload := fmt.Sprintf(`{"v":%d}`, seq)
				switch r.IntN(6) {
				case 0, 1:
					k := nodes[r.IntN(len(nodes))]
					if err := tx.PutNode(NodePut{Key: k, Payload: []byte(payload)}); err != nil {
						return err
					}
					nodeHist[k] = record(nodeHist[k], histOp{rev, false, meta.RunID, meta.TaskID, payload})
					liveNode[k] = true
				case 2:
					k := nodes[r.IntN(len(nodes))]
					if !liveNode[k] {
						continue
					}
					if err := tx.DeleteNode(k); err != nil {
						return err
					}
					nodeHist[k] = record(nodeHist[k], histOp{rev, true, meta.RunID, meta.TaskID, ""})
					liveNode[k] = false
				case 3:
					e := [3]string{nodes[r.IntN(2)], []string{"calls", "constrains"}[r.IntN(2)], nodes[2+r.IntN(2)]}
					if err := tx.PutEdge(EdgePut{Src: e[0], Rel: e[1], Dst: e[2], Payload: []byte(payload)}); err != nil {
						return err
					}
					edgeHist[e] = record(edgeHist[e], histOp{rev, false, meta.RunID, meta.TaskID, payload})
					liveEdge[e] = true
				case 4:
					e := [3]string{nodes[r.IntN(2)], []string{"calls", "constrains"}[r.IntN(2)], nodes[2+r.IntN(2)]}
					if !liveEdge[e] {
						continue
					}
					if err := tx.DeleteEdge(e[0], e[1], e[2]); err != nil {
						return err
					}
					edgeHist[e] = record(edgeHist[e], histOp{rev, true, meta.RunID, meta.TaskID, ""})
					liveEdge[e] = false
				case 5:
					k := kvKeys[r.IntN(len(kvKeys))]
					if liveKV[k] && r.IntN(3) == 0 {
						if err := tx.DeleteKV("repo", "decisions", k); err != nil {
							return err
						}
						kvHist[k] = record(kvHist[k], histOp{rev, true, meta.RunID, meta.TaskID, ""})
						liveKV[k] = false
						continue
					}
					if err := tx.PutKV(KVPut{Scope: "repo", Namespace: "decisions", Key: k, Payload: []byte(payload)}); err != nil {
						return err
					}
					kvHist[k] = record(kvHist[k], histOp{rev, false, meta.RunID, meta.TaskID, payload})
					liveKV[k] = true
				}
			}
			return nil
		})
		if c.Rev == 0 { // every operation drawn was a skipped delete
			rev--
			continue
		}
		if c.Rev != rev {
			t.Fatalf("commit rev %d, want %d", c.Rev, rev)
		}
		headers = append(headers, LogHeader{Rev: rev, TS: c.Time, RunID: meta.RunID, TaskID: meta.TaskID, Ops: c.Ops})
	}
	toOps := func(vs []Version) []histOp {
		var out []histOp
		for _, v := range vs {
			out = append(out, histOp{v.Rev, v.Deleted, v.RunID, v.TaskID, string(v.Payload)})
		}
		return out
	}
	allow := cmp.AllowUnexported(histOp{})
	err := s.View(func(rt *ReadTxn) error {
		for _, k := range nodes {
			var got []Version
			if err := rt.NodeVersions(k, func(v Version) error { got = append(got, v); return nil }); err != nil {
				return err
			}
			if d := cmp.Diff(nodeHist[k], toOps(got), allow); d != "" {
				t.Errorf("NodeVersions(%s) (-want +got):\n%s", k, d)
			}
			for _, v := range got {
				if want, _ := rt.RevisionTime(v.Rev); !v.TS.Equal(want) {
					t.Errorf("node %s version %d: time %v, want the commit time %v", k, v.Rev, v.TS, want)
				}
			}
		}
		for e, want := range edgeHist {
			rel, err := rt.RelationByName(e[1])
			if err != nil {
				return err
			}
			var got []Version
			if err := rt.EdgeVersions(IDOf(e[0]), rel.ID, IDOf(e[2]), func(v Version) error { got = append(got, v); return nil }); err != nil {
				return err
			}
			if d := cmp.Diff(want, toOps(got), allow); d != "" {
				t.Errorf("EdgeVersions(%v) (-want +got):\n%s", e, d)
			}
			// The adjacency lists hold the same versions, from both ends.
			for _, out := range []bool{true, false} {
				node, peer := IDOf(e[0]), IDOf(e[2])
				if !out {
					node, peer = peer, node
				}
				var revs []histOp
				if err := rt.ScanAdjHistory(out, node, rel.ID, func(a AdjEntry) bool {
					if a.Peer == peer {
						revs = append(revs, histOp{rev: a.Rev, deleted: a.Deleted})
					}
					return true
				}); err != nil {
					return err
				}
				var wantRevs []histOp
				for _, w := range want {
					wantRevs = append(wantRevs, histOp{rev: w.rev, deleted: w.deleted})
				}
				if d := cmp.Diff(wantRevs, revs, allow); d != "" {
					t.Errorf("ScanAdjHistory(out=%v, %v) (-want +got):\n%s", out, e, d)
				}
			}
		}
		for _, k := range kvKeys {
			var got []Version
			if err := rt.KVVersions("repo", "decisions", k, func(v Version) error { got = append(got, v); return nil }); err != nil {
				return err
			}
			if d := cmp.Diff(kvHist[k], toOps(got), allow); d != "" {
				t.Errorf("KVVersions(%s) (-want +got):\n%s", k, d)
			}
		}
		var live []string
		if err := rt.ScanKV(At{}, func(kv KV) error { live = append(live, kv.Key); return nil }); err != nil {
			return err
		}
		var wantLive []string
		for _, k := range kvKeys {
			if liveKV[k] {
				wantLive = append(wantLive, k)
			}
		}
		if d := cmp.Diff(wantLive, live, cmpOpts...); d != "" {
			t.Errorf("ScanKV (-want +got):\n%s", d)
		}
		var got []LogHeader
		if err := rt.LogHeaders(1<<62, func(h LogHeader) bool { got = append(got, h); return true }); err != nil {
			return err
		}
		want := slices.Clone(headers)
		slices.Reverse(want)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("LogHeaders (-want +got):\n%s", d)
		}
		var some []Revision
		if err := rt.LogHeaders(10, func(h LogHeader) bool { some = append(some, h.Rev); return len(some) < 3 }); err != nil {
			return err
		}
		if d := cmp.Diff([]Revision{10, 9, 8}, some); d != "" {
			t.Errorf("LogHeaders from 10, stopped after 3 (-want +got):\n%s", d)
		}
		// RevisionHeader reads the revs entry: the log header without
		// its operation count.
		for _, h := range headers {
			got, err := rt.RevisionHeader(h.Rev)
			if err != nil {
				return err
			}
			h.Ops = 0
			if d := cmp.Diff(h, got); d != "" {
				t.Errorf("RevisionHeader(%d) (-want +got):\n%s", h.Rev, d)
			}
		}
		for _, rev := range []Revision{0, headers[len(headers)-1].Rev + 1} {
			if _, err := rt.RevisionHeader(rev); !errors.Is(err, ErrNotFound) {
				t.Errorf("RevisionHeader(%d): %v, want ErrNotFound", rev, err)
			}
		}
		var ops int
		if err := rt.RevisionOps(5, func(Op) error { ops++; return nil }); err != nil {
			return err
		}
		if ops != headers[4].Ops {
			t.Errorf("RevisionOps(5): %d ops, want %d", ops, headers[4].Ops)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A point-in-time ScanKV sees the entries live at that revision.
	err = s.View(func(rt *ReadTxn) error {
		for _, at := range []Revision{10, 30} {
			var got []string
			if err := rt.ScanKV(AtRevision(at), func(kv KV) error { got = append(got, kv.Key); return nil }); err != nil {
				return err
			}
			var want []string
			for _, k := range kvKeys {
				live := false
				for _, h := range kvHist[k] {
					if h.rev <= at {
						live = !h.deleted
					}
				}
				if live {
					want = append(want, k)
				}
			}
			if d := cmp.Diff(want, got, cmpOpts...); d != "" {
				t.Errorf("ScanKV at %d (-want +got):\n%s", at, d)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRevisionTimeKept: RevisionTime answers each committed revision's
// log header time, the first time and again (from the store's cache), and
// in a write transaction its pending time; a revision whose transaction
// aborted is not kept: the next commit under that number answers its own
// time.
func TestRevisionTimeKept(t *testing.T) {
	s := newStore(t, Options{})
	errAbort := errors.New("abort")
	put := func(key string) {
		t.Helper()
		if _, err := s.Update(WriteMeta{}, func(tx *WriteTxn) error { return tx.PutNode(NodePut{Key: key}) }); err != nil {
			t.Fatal(err)
		}
	}
	headers := func() map[Revision]time.Time {
		t.Helper()
		out := map[Revision]time.Time{}
		err := s.View(func(r *ReadTxn) error {
			return r.LogHeaders(1<<62, func(h LogHeader) bool { out[h.Rev] = h.TS; return true })
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	check := func() {
		t.Helper()
		for range 2 {
			for rev, want := range headers() {
				err := s.View(func(r *ReadTxn) error {
					got, err := r.RevisionTime(rev)
					if err == nil && !got.Equal(want) {
						t.Errorf("revision %d: time %v, want %v", rev, got, want)
					}
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	put("n:a")
	put("n:b")
	check()
	var pending time.Time
	_, err := s.Update(WriteMeta{}, func(tx *WriteTxn) error {
		if err := tx.PutNode(NodePut{Key: "n:c"}); err != nil {
			return err
		}
		var err error
		if pending, err = tx.Reader().RevisionTime(3); err != nil {
			return err
		}
		return errAbort
	})
	if !errors.Is(err, errAbort) || pending.IsZero() {
		t.Fatalf("aborted write: %v, pending time %v", err, pending)
	}
	err = s.View(func(r *ReadTxn) error { _, err := r.RevisionTime(3); return err })
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("revision 3 after the abort: %v, want ErrNotFound", err)
	}
	put("n:d")
	if h := headers(); len(h) != 3 {
		t.Fatalf("%d revisions, want 3", len(h))
	}
	check()
}
