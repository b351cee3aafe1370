package lmdbstore

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/google/go-cmp/cmp"
)

// TestAdjBufLayoutMatchesDirect runs one random workload (runs of edges per
// source as a bulk load writes them, scattered edges, overwrites, deletes,
// reads inside the transaction, retention so chunks compact inline, small
// chunks so they split) on a store with the adjacency write-back buffer
// (and the existing-edge lookup it lets PutEdge skip) and on one without:
// the out, in, e and hist keyspaces must be byte-identical after every
// commit.
func TestAdjBufLayoutMatchesDirect(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			buffered := newStore(t, Options{})
			direct := newStore(t, Options{})
			direct.setAdjDirectForTest()
			for _, s := range []*Store{buffered, direct} {
				s.setChunkMaxForTest(4 + int(seed%3)*3)
				if seed%2 == 1 {
					if err := s.SetRetention(3); err != nil {
						t.Fatal(err)
					}
				}
			}
			rng := rand.New(rand.NewPCG(seed, 7))
			type step struct {
				del      bool
				read     bool
				src, dst string
				rel      string
			}
			rels := []string{"calls", "imports", "defines"}
			for txn := range 25 {
				var steps []step
				for len(steps) < 60 {
					src := fmt.Sprint("n", rng.IntN(12))
					run := 1 + rng.IntN(10)
					for range run {
						steps = append(steps, step{del: rng.IntN(6) == 0, read: rng.IntN(25) == 0,
							src: src, dst: fmt.Sprint("n", rng.IntN(30)), rel: rels[rng.IntN(len(rels))]})
					}
				}
				var outs [2][]string
				for i, s := range []*Store{buffered, direct} {
					mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error {
						for _, st := range steps {
							if st.read {
								edges, err := tx.Reader().GetOut(st.src, "", At{})
								if err != nil {
									return err
								}
								outs[i] = append(outs[i], fmt.Sprint(edges))
							}
							if st.del {
								if err := tx.DeleteEdge(st.src, st.rel, st.dst); err != nil && !isNotFound(err) {
									return err
								}
								continue
							}
							if err := tx.PutEdge(EdgePut{Src: st.src, Rel: st.rel, Dst: st.dst}); err != nil {
								return err
							}
						}
						return nil
					})
				}
				if diff := cmp.Diff(outs[0], outs[1]); diff != "" {
					t.Fatalf("txn %d: reads inside the transaction differ (-buffered +direct):\n%s", txn, diff)
				}
				for _, db := range []string{dbOut, dbIn, dbEdges, dbHist} {
					if diff := cmp.Diff(dumpDB(t, buffered, db), dumpDB(t, direct, db)); diff != "" {
						t.Fatalf("txn %d: %s keyspace differs (-buffered +direct):\n%s", txn, db, diff)
					}
				}
			}
		})
	}
}

func isNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

func dumpDB(t *testing.T, s *Store, name string) []string {
	t.Helper()
	dbi := map[string]lmdb.DBI{dbOut: s.db.out, dbIn: s.db.in, dbEdges: s.db.e, dbHist: s.db.hist}[name]
	var kv []string
	if err := s.view(func(txn *lmdb.Txn) error {
		cur, err := txn.OpenCursor(dbi)
		if err != nil {
			return err
		}
		defer cur.Close()
		for k, v, err := cur.Get(nil, nil, lmdb.First); err == nil; k, v, err = cur.Get(nil, nil, lmdb.Next) {
			kv = append(kv, fmt.Sprintf("%x=%x", k, v))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return kv
}
