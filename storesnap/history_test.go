package storesnap_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/snapshot"
	"github.com/memctl/memctl/storesnap"
)

// exportView is what an export holds: node keys with their flags, and
// edges as "src rel dst".
type exportView struct {
	Nodes map[string]string // key -> "live"/"missing" + ",superseded" + ",expired"
	Edges []string
}

// TestExportLeavesHistoryOut: over random histories with supersedes and
// contradicts edges, validity and kv addresses, every export (default,
// and with each include flag) holds exactly the items the store's
// per-item filter (ReadTxn.Visible, a separate implementation) shows, the
// edges between them, and the missing endpoints of those edges.
func TestExportLeavesHistoryOut(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for iter := range 8 {
		s := randomStatusHistory(t, rng, t0)
		for _, f := range []lmdbstore.StatusFilter{
			{ValidAt: t0},
			{ValidAt: t0.Add(2 * time.Hour)},
			{ValidAt: t0, IncludeSuperseded: true},
			{ValidAt: t0, IncludeExpired: true},
			{ValidAt: t0, IncludeSuperseded: true, IncludeExpired: true},
		} {
			want := expectedView(t, s, f)
			b, err := storesnap.ExportBytesFiltered(s, lmdbstore.At{}, f, snapshot.WriterOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got := readView(t, b)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("history %d, filter %+v (-store +export):\n%s", iter, f, diff)
			}
		}
	}
}

// TestExportValidUntil: an export's ValidUntil is exact. Over random
// histories, for valid-at times on both sides of every bound the
// histories use, an export judged at any time in [ValidAt, ValidUntil)
// holds what the export at ValidAt holds, and the export at ValidUntil
// holds something else (no bound is reported that changes nothing).
func TestExportValidUntil(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	var times []time.Time
	for m := -150; m <= 150; m += 30 {
		times = append(times, t0.Add(time.Duration(m)*time.Minute))
	}
	bounded := 0
	iters := 12
	if raceEnabled {
		iters = 4
	}
	for iter := range iters {
		s := randomStatusHistory(t, rng, t0)
		for _, include := range []lmdbstore.StatusFilter{{}, {IncludeSuperseded: true}, {IncludeExpired: true}} {
			export := func(at time.Time) (storesnap.InMemory, exportView) {
				f := include
				f.ValidAt = at
				m, err := storesnap.ExportInMemory(s, lmdbstore.At{}, f, snapshot.WriterOptions{})
				if err != nil {
					t.Fatal(err)
				}
				return m, readView(t, m.Bytes)
			}
			for i, at := range times {
				m, want := export(at)
				if !m.ValidAt.Equal(at) {
					t.Fatalf("ValidAt %v, asked %v", m.ValidAt, at)
				}
				if !m.ValidUntil.IsZero() && !m.ValidUntil.After(at) {
					t.Fatalf("history %d %+v at %v: ValidUntil %v is not after ValidAt", iter, include, at, m.ValidUntil)
				}
				for _, later := range times[i+1:] {
					if !m.ValidUntil.IsZero() && !later.Before(m.ValidUntil) {
						break
					}
					if _, got := export(later); !cmp.Equal(want, got) {
						t.Fatalf("history %d %+v: the export at %v holds until %v, but at %v (-at +later):\n%s", iter, include, at, m.ValidUntil, later, cmp.Diff(want, got))
					}
				}
				if !m.ValidUntil.IsZero() {
					bounded++
					if _, got := export(m.ValidUntil); cmp.Equal(want, got) {
						t.Fatalf("history %d %+v: the export at %v is said to change at %v, and does not", iter, include, at, m.ValidUntil)
					}
				}
			}
		}
	}
	if bounded == 0 {
		t.Fatal("no export had a ValidUntil: the histories test nothing")
	}
}

// historyKeys and historyValidities are what randomStatusHistory writes.
var historyKeys = []string{"dec:a", "dec:b", "dec:c", "dec:d", "file:x", "file:y", lmdbstore.KVAddress("repo", "d", "k1"), lmdbstore.KVAddress("repo", "d", "k2")}

func historyValidities(t0 time.Time) []lmdbstore.Validity {
	return []lmdbstore.Validity{{}, {}, {Until: t0}, {From: t0.Add(time.Hour)}, {From: t0.Add(-time.Hour), Until: t0.Add(time.Hour)}}
}

// randomStatusHistory writes 40 random transactions of node and kv puts with
// valid times around t0, supersedes, edges and deletes.
func randomStatusHistory(t *testing.T, rng *rand.Rand, t0 time.Time) *lmdbstore.Store {
	s := newStore(t)
	keys, validities := historyKeys, historyValidities(t0)
	for range 40 {
		_, err := s.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
			for range 1 + rng.IntN(3) {
				k := keys[rng.IntN(len(keys))]
				switch rng.IntN(6) {
				case 0, 1:
					v := validities[rng.IntN(len(validities))]
					if scope, ns, key, ok := lmdbstore.ParseKVAddress(k); ok {
						_ = tx.PutKV(lmdbstore.KVPut{Scope: scope, Namespace: ns, Key: key, Payload: json.RawMessage(`1`), Valid: v})
					} else {
						_ = tx.PutNode(lmdbstore.NodePut{Key: k, Valid: v})
					}
				case 2:
					_ = tx.Supersede(keys[rng.IntN(len(keys))], k) // refused ones leave nothing
				case 3:
					_ = tx.PutEdge(lmdbstore.EdgePut{Src: k, Rel: []string{"calls", "contradicts", "decided_for"}[rng.IntN(3)], Dst: keys[rng.IntN(len(keys))]})
				case 4:
					_ = tx.DeleteEdge(k, "supersedes", keys[rng.IntN(len(keys))])
				case 5:
					_ = tx.DeleteNode(k)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// expectedView builds the export from the store's point reads.
func expectedView(t *testing.T, s *lmdbstore.Store, f lmdbstore.StatusFilter) exportView {
	v := exportView{Nodes: map[string]string{}}
	err := s.View(func(r *lmdbstore.ReadTxn) error {
		flags := func(key string) (string, bool, error) {
			vis, err := r.Visible(key, lmdbstore.At{}, f)
			if err != nil || !vis {
				return "", false, err
			}
			st, err := r.Status(key, lmdbstore.At{}, f.ValidAt)
			if err != nil {
				return "", false, err
			}
			out := ""
			if st.Superseded() {
				out += ",superseded"
			}
			return out, true, nil
		}
		if err := r.ScanNodes(lmdbstore.At{}, func(n lmdbstore.Node) error {
			fl, vis, err := flags(n.Key)
			if err != nil || !vis {
				return err
			}
			if !n.Valid.Contains(f.ValidAt) {
				fl += ",expired"
			}
			v.Nodes[n.Key] = "live" + fl
			return nil
		}); err != nil {
			return err
		}
		return r.ScanEdges(lmdbstore.At{}, func(e lmdbstore.Edge) error {
			src, _ := r.KeyOf(e.Src)
			dst, _ := r.KeyOf(e.Dst)
			rel, _ := r.RelationByID(e.Rel)
			var fls []string
			for _, k := range []string{src, dst} {
				fl, vis, err := flags(k)
				if err != nil || !vis {
					return err
				}
				fls = append(fls, fl)
			}
			for i, k := range []string{src, dst} {
				if _, live := v.Nodes[k]; !live || v.Nodes[k] == "missing"+fls[i] {
					if _, err := r.GetNode(k, lmdbstore.At{}); err != nil {
						v.Nodes[k] = "missing" + fls[i]
					}
				}
			}
			v.Edges = append(v.Edges, fmt.Sprintf("%s %s %s", src, rel.Name, dst))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(v.Edges)
	return v
}

func readView(t *testing.T, b []byte) exportView {
	g, err := csr.FromBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Verify(); err != nil {
		t.Fatal(err)
	}
	v := exportView{Nodes: map[string]string{}}
	for i := uint32(0); i < uint32(g.NumNodes()); i++ {
		n, err := g.Node(i)
		if err != nil {
			t.Fatal(err)
		}
		fl := "live"
		if n.Missing {
			fl = "missing"
		}
		if n.Superseded {
			fl += ",superseded"
		}
		if n.Expired {
			fl += ",expired"
		}
		v.Nodes[n.Key] = fl
		targets, rels, _, err := g.Out(i)
		if err != nil {
			t.Fatal(err)
		}
		for j, d := range targets {
			dst, _ := g.Key(d)
			rel, _ := g.Relation(rels[j])
			v.Edges = append(v.Edges, fmt.Sprintf("%s %s %s", n.Key, rel.Name, dst))
		}
	}
	slices.Sort(v.Edges)
	return v
}
