package lmdbstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The model is the plain definition of the store's semantics: a full copy
// of the state after every revision.

type mNode struct {
	Type, Payload, Scope, Run, Task string
	Rev, CreatedRev                 Revision
	Valid                           Validity
}

type mEdgeKey struct{ Src, Rel, Dst string }

type mEdge struct {
	Weight          float32
	Rev, CreatedRev Revision
}

type mKVKey struct{ Scope, NS, Key string }

type mKV struct {
	Payload, Run, Task string
	Rev                Revision
	Valid              Validity
}

type mState struct {
	Nodes map[string]mNode
	Edges map[mEdgeKey]mEdge
	KV    map[mKVKey]mKV
}

func (s mState) clone() mState {
	return mState{maps.Clone(s.Nodes), maps.Clone(s.Edges), maps.Clone(s.KV)}
}

type model struct {
	states  []mState // index: revision
	times   []time.Time
	horizon Revision
	retain  uint64
}

// advanceHorizon applies the retention after a commit or a compaction:
// the last retain revisions stay readable.
func (m *model) advanceHorizon() {
	latest := uint64(len(m.states) - 1)
	if m.retain > 0 && latest >= m.retain && Revision(latest-m.retain+1) > m.horizon {
		m.horizon = Revision(latest - m.retain + 1)
	}
}

var (
	modelNodeKeys = []string{"file:a", "file:b", "sym:c", "sym:d", "dec:e", "x", "file:g", "sym:h"}
	modelRels     = []string{"calls", "imports", "defines", "tests", "supersedes", "contradicts"}
	modelKVKeys   = []string{"k1", "k2", "k3", "k4"}
	modelNS       = []string{"decisions", "constraints"}
	// kv entries as edge endpoints (memory items).
	modelKVAddrs = []string{KVAddress("repo", "decisions", "k1"), KVAddress("repo", "constraints", "k2")}
	// Valid-time intervals and valid-at times around modelT0.
	modelT0       = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	modelValidity = []Validity{
		{}, {}, {}, // mostly none
		{From: modelT0.Add(-time.Hour)},
		{From: modelT0.Add(time.Hour)},
		{Until: modelT0},
		{Until: modelT0.Add(time.Hour)},
		{From: modelT0.Add(-time.Hour), Until: modelT0.Add(time.Hour)},
	}
	modelValidAt = []time.Time{modelT0.Add(-2 * time.Hour), modelT0, modelT0.Add(2 * time.Hour)}
)

// modelItems are the keys whose status the model checks.
func modelItems() []string { return append(append([]string{}, modelNodeKeys...), modelKVAddrs...) }

// TestStoreMatchesModel runs random transactions with random compactions
// and compares every read at every readable revision with the model.
func TestStoreMatchesModel(t *testing.T) {
	seeds := 6
	if n, err := strconv.Atoi(os.Getenv("MEMCTL_MODEL_SEEDS")); err == nil {
		seeds = n // soak: MEMCTL_MODEL_SEEDS=200 go test -run Model
	}
	txns := 120
	if testing.Short() {
		seeds, txns = 2, 60
	}
	for seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			runModel(t, uint64(seed), txns)
		})
	}
}

func runModel(t *testing.T, seed uint64, txns int) {
	r := rand.New(rand.NewPCG(seed, 99))
	s := newStore(t, Options{})
	if seed%2 == 1 {
		s.setChunkMaxForTest(3) // many chunks, splits and merges
	}
	m := &model{states: []mState{{map[string]mNode{}, map[mEdgeKey]mEdge{}, map[mKVKey]mKV{}}}, times: []time.Time{{}}}
	for range txns {
		cur := m.states[len(m.states)-1].clone()
		rev := Revision(len(m.states))
		meta := WriteMeta{Scope: "repo", RunID: fmt.Sprint("run", r.IntN(3)), TaskID: fmt.Sprint("task", r.IntN(3))}
		abort := r.IntN(10) == 0
		changed := false
		c, err := s.Update(meta, func(tx *WriteTxn) error {
			cur = m.states[len(m.states)-1].clone() // Update may re-run fn
			changed = false
			for range 1 + r.IntN(4) {
				ch, err := modelOp(r, tx, cur, rev, meta)
				if err != nil {
					return err
				}
				changed = changed || ch
			}
			if abort {
				return errors.New("abort")
			}
			return nil
		})
		if abort {
			if err == nil {
				t.Fatalf("aborted transaction committed")
			}
			continue
		}
		if err != nil {
			t.Fatalf("Update: %v", err)
		}
		if !changed {
			// Operations that leave every record as it was commit nothing.
			if c.Rev != 0 || c.Ops != 0 {
				t.Fatalf("a transaction that changed nothing committed %+v", c)
			}
			continue
		}
		if c.Rev != rev {
			t.Fatalf("commit rev %d, want %d", c.Rev, rev)
		}
		m.states = append(m.states, cur)
		m.times = append(m.times, c.Time)
		m.advanceHorizon()
		if r.IntN(8) == 0 {
			if r.IntN(2) == 0 {
				m.retain = uint64(r.IntN(6))
				if err := s.SetRetention(m.retain); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.Compact(); err != nil {
				t.Fatalf("Compact: %v", err)
			}
			m.advanceHorizon()
			mustCheck(t, s)
		}
	}
	compareAll(t, s, m)
	last := m.states[len(m.states)-1]
	st, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	missing := map[string]bool{}
	for k := range last.Edges {
		for _, key := range []string{k.Src, k.Dst} {
			if _, ok := last.Nodes[key]; !ok {
				missing[key] = true
			}
		}
	}
	got := [5]int{st.Nodes, st.Edges, st.KVs, st.MissingNodes, int(st.Horizon)}
	want := [5]int{len(last.Nodes), len(last.Edges), len(last.KV), len(missing), int(m.horizon)}
	if got != want {
		t.Errorf("Stats nodes, edges, kvs, missing, horizon = %v, model %v", got, want)
	}
	rep := mustCheck(t, s)
	if len(rep.MissingNodes) != len(missing) {
		t.Errorf("Check lists %d missing nodes, model %d", len(rep.MissingNodes), len(missing))
	}
}

// modelOp applies one random operation to the store and to the model,
// and reports whether it changed anything. An operation the store refuses
// with ErrNotFound (or, for an edge the model refuses, ErrInvalid) is
// skipped by both.
func modelOp(r *rand.Rand, tx *WriteTxn, st mState, rev Revision, meta WriteMeta) (bool, error) {
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	endpoint := func() string {
		if r.IntN(6) == 0 {
			return pick(modelKVAddrs)
		}
		return pick(modelNodeKeys)
	}
	switch r.IntN(12) {
	case 0, 1:
		key := pick(modelNodeKeys)
		payload := []string{`{"v":1}`, `{"v":2}`, ``, `null`}[r.IntN(4)]
		valid := modelValidity[r.IntN(len(modelValidity))]
		if err := tx.PutNode(NodePut{Key: key, Payload: json.RawMessage(payload), Valid: valid}); err != nil {
			return false, err
		}
		if payload == "null" {
			payload = "" // null and no payload are one thing
		}
		typ := ""
		if i := indexByte(key, ':'); i >= 0 {
			typ = key[:i]
		}
		old, ok := st.Nodes[key]
		if ok && old.Type == typ && old.Payload == payload && old.Valid == valid {
			return false, nil // no change: provenance alone does not count
		}
		n := mNode{Type: typ, Payload: payload, Scope: meta.Scope, Run: meta.RunID, Task: meta.TaskID, Rev: rev, CreatedRev: rev, Valid: valid}
		if ok {
			n.CreatedRev = old.CreatedRev
		}
		st.Nodes[key] = n
	case 2:
		key := pick(modelNodeKeys)
		err := tx.DeleteNode(key)
		if _, ok := st.Nodes[key]; !ok {
			if !errors.Is(err, ErrNotFound) {
				return false, fmt.Errorf("DeleteNode of a missing node: %v", err)
			}
			return false, nil
		}
		if err != nil {
			return false, err
		}
		delete(st.Nodes, key)
	case 3, 4, 5:
		k := mEdgeKey{endpoint(), pick(modelRels), endpoint()}
		w := []float32{0, 0.5, 2, 1}[r.IntN(4)]
		return modelPutEdge(tx, st, rev, k, w, func() error {
			return tx.PutEdge(EdgePut{Src: k.Src, Rel: k.Rel, Dst: k.Dst, Weight: w})
		})
	case 6, 7:
		k := mEdgeKey{endpoint(), pick(modelRels), endpoint()}
		if r.IntN(2) == 0 && len(st.Edges) > 0 { // usually delete one that exists
			keys := sortedEdgeKeys(st.Edges)
			k = keys[r.IntN(len(keys))]
		}
		err := tx.DeleteEdge(k.Src, k.Rel, k.Dst)
		if _, ok := st.Edges[k]; !ok {
			if !errors.Is(err, ErrNotFound) {
				return false, fmt.Errorf("DeleteEdge of a missing edge: %v", err)
			}
			return false, nil
		}
		if err != nil {
			return false, err
		}
		delete(st.Edges, k)
	case 8:
		k := mKVKey{"repo", pick(modelNS), pick(modelKVKeys)}
		payload := []string{`"p1"`, `"p2"`, `{"b":1,"a":2}`}[r.IntN(3)]
		valid := modelValidity[r.IntN(len(modelValidity))]
		if err := tx.PutKV(KVPut{Namespace: k.NS, Key: k.Key, Payload: json.RawMessage(payload), Valid: valid}); err != nil {
			return false, err
		}
		if payload == `{"b":1,"a":2}` {
			payload = `{"a":2,"b":1}` // canonical
		}
		if old, ok := st.KV[k]; ok && old.Payload == payload && old.Valid == valid {
			return false, nil
		}
		st.KV[k] = mKV{Payload: payload, Run: meta.RunID, Task: meta.TaskID, Rev: rev, Valid: valid}
	case 9:
		k := mKVKey{"repo", pick(modelNS), pick(modelKVKeys)}
		err := tx.DeleteKV(k.Scope, k.NS, k.Key)
		if _, ok := st.KV[k]; !ok {
			if !errors.Is(err, ErrNotFound) {
				return false, fmt.Errorf("DeleteKV of a missing entry: %v", err)
			}
			return false, nil
		}
		if err != nil {
			return false, err
		}
		delete(st.KV, k)
	case 10, 11:
		// Supersede OLD NEW: both must be live items.
		older, newer := endpoint(), endpoint()
		err := tx.Supersede(older, newer)
		if !st.live(older) || !st.live(newer) {
			if !errors.Is(err, ErrNotFound) {
				return false, fmt.Errorf("Supersede(%s, %s) of a missing item: %v", older, newer, err)
			}
			return false, nil
		}
		k := mEdgeKey{newer, "supersedes", older}
		return modelPutEdge(tx, st, rev, k, 0, func() error { return err })
	}
	return true, nil
}

// live reports whether key is a live node or (a kv address) a live entry.
func (s mState) live(key string) bool {
	if scope, ns, k, ok := ParseKVAddress(key); ok {
		_, live := s.KV[mKVKey{scope, ns, k}]
		return live
	}
	_, live := s.Nodes[key]
	return live
}

// modelPutEdge applies a put of edge k with weight w (0: default) to the
// model; put is the store call (already made or to make). The model refuses
// what the store must refuse: an item superseding or contradicting itself,
// or a supersedes edge closing a cycle.
func modelPutEdge(tx *WriteTxn, st mState, rev Revision, k mEdgeKey, w float32, put func() error) (bool, error) {
	err := put()
	refuse := (k.Rel == "supersedes" || k.Rel == "contradicts") && k.Src == k.Dst ||
		k.Rel == "supersedes" && st.supersedesChain(k.Dst, k.Src)
	if refuse {
		if !errors.Is(err, ErrInvalid) {
			return false, fmt.Errorf("PutEdge %v: %v, want ErrInvalid", k, err)
		}
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if w == 0 {
		w = 1
	}
	old, ok := st.Edges[k]
	if ok && old.Weight == w {
		return false, nil
	}
	e := mEdge{Weight: w, Rev: rev, CreatedRev: rev}
	if ok {
		e.CreatedRev = old.CreatedRev
	}
	st.Edges[k] = e
	return true, nil
}

// supersedesChain reports whether from reaches to through supersedes edges.
func (s mState) supersedesChain(from, to string) bool {
	seen := map[string]bool{from: true}
	queue := []string{from}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for k := range s.Edges {
			if k.Rel == "supersedes" && k.Src == n {
				if k.Dst == to {
					return true
				}
				if !seen[k.Dst] {
					seen[k.Dst] = true
					queue = append(queue, k.Dst)
				}
			}
		}
	}
	return false
}

// status is the model's definition of Status.
func (s mState) status(key string, validAt time.Time, times []time.Time) Status {
	st := Status{Valid: s.validAt(key, validAt), Pending: s.pendingAt(key, validAt)}
	for k, e := range s.Edges {
		if k.Rel == "supersedes" && k.Dst == key {
			st.SupersededBy = append(st.SupersededBy, Supersession{By: k.Src, Rev: e.CreatedRev, TS: times[e.CreatedRev]})
		}
	}
	sort.Slice(st.SupersededBy, func(i, j int) bool {
		a, b := st.SupersededBy[i], st.SupersededBy[j]
		return a.Rev < b.Rev || a.Rev == b.Rev && a.By < b.By
	})
	if st.Superseded() {
		// newest: follow the superseder whose edge was written last.
		cur := key
		for {
			best, bestRev := "", Revision(0)
			for k, e := range s.Edges {
				if k.Rel == "supersedes" && k.Dst == cur && (best == "" || e.Rev > bestRev || e.Rev == bestRev && k.Src < best) {
					best, bestRev = k.Src, e.Rev
				}
			}
			if best == "" {
				break
			}
			cur = best
		}
		st.Newest = cur
		return st
	}
	if !st.Valid {
		return st
	}
	seen := map[string]bool{}
	for k := range s.Edges {
		if k.Rel != "contradicts" {
			continue
		}
		var other string
		switch key {
		case k.Src:
			other = k.Dst
		case k.Dst:
			other = k.Src
		default:
			continue
		}
		if other == key || seen[other] {
			continue
		}
		seen[other] = true
		if s.current(other, validAt) {
			st.Contradicts = append(st.Contradicts, other)
		}
	}
	sort.Strings(st.Contradicts)
	return st
}

func (s mState) validAt(key string, t time.Time) bool {
	// [From, Until), a zero bound open; written out here rather than
	// calling Validity.Contains, which is under test.
	in := func(v Validity) bool {
		return (v.From.IsZero() || !t.Before(v.From)) && (v.Until.IsZero() || t.Before(v.Until))
	}
	if scope, ns, k, ok := ParseKVAddress(key); ok {
		e, live := s.KV[mKVKey{scope, ns, k}]
		return !live || in(e.Valid)
	}
	n, live := s.Nodes[key]
	return !live || in(n.Valid)
}

// pendingAt: the item's valid time begins after t (its valid_from is
// later), so it is not yet valid.
func (s mState) pendingAt(key string, t time.Time) bool {
	var v Validity
	if scope, ns, k, ok := ParseKVAddress(key); ok {
		e, live := s.KV[mKVKey{scope, ns, k}]
		if !live {
			return false
		}
		v = e.Valid
	} else {
		n, live := s.Nodes[key]
		if !live {
			return false
		}
		v = n.Valid
	}
	return !v.From.IsZero() && t.Before(v.From)
}

func (s mState) current(key string, t time.Time) bool {
	for k := range s.Edges {
		if k.Rel == "supersedes" && k.Dst == key {
			return false
		}
	}
	return s.validAt(key, t)
}

func indexByte(s string, c byte) int {
	for i := range len(s) {
		if s[i] == c {
			return i
		}
	}
	return -1
}

func sortedEdgeKeys(m map[mEdgeKey]mEdge) []mEdgeKey {
	keys := make([]mEdgeKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.Src != b.Src {
			return a.Src < b.Src
		}
		if a.Rel != b.Rel {
			return a.Rel < b.Rel
		}
		return a.Dst < b.Dst
	})
	return keys
}

// modelAdj lists what GetOut (out=true) or GetIn of key with rel filter
// must return, in the store's order: (relation id, peer id).
func modelAdj(r *ReadTxn, st mState, key, rel string, out bool) []simpleEdge {
	var es []simpleEdge
	for k, e := range st.Edges {
		if rel != "" && k.Rel != rel {
			continue
		}
		if (out && k.Src == key) || (!out && k.Dst == key) {
			es = append(es, simpleEdge{k.Src, k.Rel, k.Dst, e.Rev, e.Weight})
		}
	}
	relID := func(name string) RelID {
		x, _ := r.RelationByName(name)
		return x.ID
	}
	sort.Slice(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.Rel != b.Rel {
			return relID(a.Rel) < relID(b.Rel)
		}
		if out {
			return IDOf(a.Dst) < IDOf(b.Dst)
		}
		return IDOf(a.Src) < IDOf(b.Src)
	})
	return es
}

func compareAll(t *testing.T, s *Store, m *model) {
	t.Helper()
	err := s.View(func(r *ReadTxn) error {
		latest := Revision(len(m.states) - 1)
		if r.Revision() != latest {
			t.Fatalf("store at revision %d, model at %d", r.Revision(), latest)
		}
		for rev := Revision(0); rev <= latest; rev++ {
			at := AtRevision(rev)
			if m.horizon > 0 && rev < m.horizon {
				_, err := r.GetOut("file:a", "", at)
				wantErr(t, err, ErrBeforeHorizon)
				_, err = r.GetNode("file:a", at)
				wantErr(t, err, ErrBeforeHorizon)
				continue
			}
			if rev > 0 {
				got, err := r.Resolve(AtTime(m.times[rev]))
				if err != nil || got != rev {
					t.Fatalf("Resolve(AtTime(commit time of %d)) = %d, %v", rev, got, err)
				}
			}
			compareAt(t, r, m.states[rev], m.times, at, fmt.Sprintf("rev %d", rev))
		}
		compareAt(t, r, m.states[latest], m.times, At{}, "latest")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func compareAt(t *testing.T, r *ReadTxn, st mState, times []time.Time, at At, where string) {
	t.Helper()
	for _, key := range modelItems() {
		for _, validAt := range modelValidAt {
			got, err := r.Status(key, at, validAt)
			if err != nil {
				t.Fatalf("%s: Status(%s): %v", where, key, err)
			}
			want := st.status(key, validAt, times)
			if diff := cmp.Diff(want, got, cmpOpts...); diff != "" {
				t.Fatalf("%s: Status(%s, valid at %s) (-model +store):\n%s", where, key, validAt.Format(time.RFC3339), diff)
			}
			for _, f := range []StatusFilter{{ValidAt: validAt}, {ValidAt: validAt, IncludeSuperseded: true}, {ValidAt: validAt, IncludeExpired: true}} {
				vis, err := r.Visible(key, at, f)
				if err != nil {
					t.Fatalf("%s: Visible(%s): %v", where, key, err)
				}
				if vis != f.Shows(want) {
					t.Fatalf("%s: Visible(%s, %+v) = %v, model status %+v", where, key, f, vis, want)
				}
			}
		}
	}
	for _, key := range modelItems() {
		for _, rel := range append([]string{""}, "calls", "supersedes") {
			for _, out := range []bool{true, false} {
				var got []Edge
				var err error
				if out {
					got, err = r.GetOut(key, rel, at)
				} else {
					got, err = r.GetIn(key, rel, at)
				}
				if err != nil {
					t.Fatalf("%s: GetOut/In(%s, %q): %v", where, key, rel, err)
				}
				if diff := cmp.Diff(modelAdj(r, st, key, rel, out), readEdges(t, r, got), cmpOpts...); diff != "" {
					t.Fatalf("%s: adjacency of %s rel %q out=%v (-model +store):\n%s", where, key, rel, out, diff)
				}
				if diff := cmp.Diff(modelAdj(r, st, key, rel, out), neighbourEdges(t, r, out, key, rel, at), cmpOpts...); diff != "" {
					t.Fatalf("%s: Neighbours of %s rel %q out=%v (-model +store):\n%s", where, key, rel, out, diff)
				}
			}
		}
		n, err := r.GetNode(key, at)
		want, ok := st.Nodes[key]
		if !ok {
			if strings.HasPrefix(key, "kv:") {
				continue
			}
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("%s: GetNode(%s) = %+v, %v; want not found", where, key, n, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: GetNode(%s): %v", where, key, err)
		}
		got := mNode{Type: n.Type, Payload: string(n.Payload), Scope: n.Scope, Run: n.RunID, Task: n.TaskID, Rev: n.Rev, CreatedRev: n.CreatedRev, Valid: n.Valid}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%s: GetNode(%s) (-model +store):\n%s", where, key, diff)
		}
	}
	// every edge, in (src id, rel id, dst id) order
	var all []simpleEdge
	var scanned []Edge
	if err := r.ScanEdges(at, func(e Edge) error { scanned = append(scanned, e); return nil }); err != nil {
		t.Fatalf("%s: ScanEdges: %v", where, err)
	}
	for k, e := range st.Edges {
		all = append(all, simpleEdge{k.Src, k.Rel, k.Dst, e.Rev, e.Weight})
	}
	relID := func(name string) RelID { x, _ := r.RelationByName(name); return x.ID }
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if IDOf(a.Src) != IDOf(b.Src) {
			return IDOf(a.Src) < IDOf(b.Src)
		}
		if a.Rel != b.Rel {
			return relID(a.Rel) < relID(b.Rel)
		}
		return IDOf(a.Dst) < IDOf(b.Dst)
	})
	if diff := cmp.Diff(all, readEdges(t, r, scanned), cmpOpts...); diff != "" {
		t.Fatalf("%s: ScanEdges (-model +store):\n%s", where, diff)
	}
	// ScanEdgesOf: the model's edges of each relation alone, and of none
	rels, err := r.Relations()
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range append(rels, Relation{}) {
		var of []Edge
		ids := []RelID{rel.ID}
		if rel.ID == 0 {
			ids = nil
		}
		if err := r.ScanEdgesOf(at, ids, func(e Edge) error { of = append(of, e); return nil }); err != nil {
			t.Fatalf("%s: ScanEdgesOf(%s): %v", where, rel.Name, err)
		}
		var want []simpleEdge
		for _, e := range all {
			if rel.ID != 0 && e.Rel == rel.Name {
				want = append(want, e)
			}
		}
		if diff := cmp.Diff(want, readEdges(t, r, of), cmpOpts...); diff != "" {
			t.Fatalf("%s: ScanEdgesOf(%s) (-model +store):\n%s", where, rel.Name, diff)
		}
	}
	var nodes []string
	if err := r.ScanNodes(at, func(n Node) error { nodes = append(nodes, n.Key); return nil }); err != nil {
		t.Fatalf("%s: ScanNodes: %v", where, err)
	}
	var wantNodes []string
	for k := range st.Nodes {
		wantNodes = append(wantNodes, k)
	}
	sort.Slice(wantNodes, func(i, j int) bool { return IDOf(wantNodes[i]) < IDOf(wantNodes[j]) })
	if diff := cmp.Diff(wantNodes, nodes, cmpOpts...); diff != "" {
		t.Fatalf("%s: ScanNodes (-model +store):\n%s", where, diff)
	}
	for _, ns := range modelNS {
		list, err := r.ListKV("repo", ns, at)
		if err != nil {
			t.Fatalf("%s: ListKV: %v", where, err)
		}
		var got, want []mKV
		var gotKeys, wantKeys []string
		for _, kv := range list {
			got = append(got, mKV{string(kv.Payload), kv.RunID, kv.TaskID, kv.Rev, kv.Valid})
			gotKeys = append(gotKeys, kv.Key)
		}
		for _, key := range modelKVKeys {
			e, ok := st.KV[mKVKey{"repo", ns, key}]
			kv, err := r.GetKV("repo", ns, key, at)
			if !ok {
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("%s: GetKV(%s/%s) = %+v, %v; want not found", where, ns, key, kv, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: GetKV: %v", where, err)
			}
			if diff := cmp.Diff(e, mKV{string(kv.Payload), kv.RunID, kv.TaskID, kv.Rev, kv.Valid}); diff != "" {
				t.Fatalf("%s: GetKV(%s/%s) (-model +store):\n%s", where, ns, key, diff)
			}
			want = append(want, e)
			wantKeys = append(wantKeys, key)
		}
		if diff := cmp.Diff(wantKeys, gotKeys, cmpOpts...); diff != "" {
			t.Fatalf("%s: ListKV keys (-model +store):\n%s", where, diff)
		}
		if diff := cmp.Diff(want, got, cmpOpts...); diff != "" {
			t.Fatalf("%s: ListKV (-model +store):\n%s", where, diff)
		}
	}
}
