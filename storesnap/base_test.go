package storesnap_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/roles"
	"github.com/memctl/memctl/snapshot"
	"github.com/memctl/memctl/storesnap"
)

// baseTimes are the instants valid times and valid-at times are drawn
// from: the clock's commit times are in 2026-01-01, these a day later.
var baseTimes = func() []time.Time {
	t0 := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	out := make([]time.Time, 5)
	for i := range out {
		out[i] = t0.Add(time.Duration(i) * time.Hour)
	}
	return out
}()

// randomValidity is none, or a valid time with a random bound or two.
func randomValidity(rng *rand.Rand) lmdbstore.Validity {
	var v lmdbstore.Validity
	if rng.IntN(3) > 0 {
		return v
	}
	if rng.IntN(2) == 0 {
		v.From = baseTimes[rng.IntN(len(baseTimes))]
	}
	if rng.IntN(2) == 0 {
		v.Until = baseTimes[rng.IntN(len(baseTimes))].Add(30 * time.Minute)
	}
	if !v.From.IsZero() && !v.Until.IsZero() && !v.From.Before(v.Until) {
		v.From = time.Time{}
	}
	return v
}

// deltaOp writes one random change: node puts (payloads none, small, or
// large enough to be compressed; scopes; valid times), deletes, edges of
// every built-in kind among them supersedes (whose targets leave the
// export as history), edges to kv addresses, kv puts and deletes (with
// valid times), edge deletes.
func deltaOp(rng *rand.Rand, tx *lmdbstore.WriteTxn) error {
	key := func() string {
		if rng.IntN(10) == 0 {
			return lmdbstore.KVAddress("s", "ns", fmt.Sprintf("k%d", rng.IntN(4)))
		}
		return fmt.Sprintf("%s:k%d", []string{"file", "sym", "dec"}[rng.IntN(3)], rng.IntN(30))
	}
	rels := []string{"calls", "imports", roles.RelSupersedes, roles.RelDecidedFor}
	// Decisions linked only by supersedes edges, among few enough that
	// deletes hit: a target leaves the export and comes back with no
	// other edge to bring it.
	dec := func() string { return fmt.Sprintf("dec:d%d", rng.IntN(4)) }
	var err error
	switch r := rng.IntN(26); {
	case r >= 24:
		if rng.IntN(2) == 0 {
			err = tx.PutNode(lmdbstore.NodePut{Key: dec(), Type: "decision", Payload: json.RawMessage(fmt.Sprintf(`{"d":%d}`, rng.IntN(9)))})
			break
		}
		src, dst := dec(), dec()
		if src == dst {
			return nil
		}
		if r == 24 {
			err = tx.PutEdge(lmdbstore.EdgePut{Src: src, Rel: roles.RelSupersedes, Dst: dst})
			if errors.Is(err, lmdbstore.ErrInvalid) {
				return nil // a supersede cycle
			}
		} else {
			err = tx.DeleteEdge(src, roles.RelSupersedes, dst)
		}
	case r < 8:
		var payload string
		switch rng.IntN(3) {
		case 1:
			payload = fmt.Sprintf(`{"v":%d}`, rng.IntN(50))
		case 2:
			payload = fmt.Sprintf(`{"text":%q}`, bytes.Repeat([]byte(fmt.Sprintf("word%d ", rng.IntN(9))), 60+rng.IntN(50)))
		}
		k := key()
		if _, _, _, ok := lmdbstore.ParseKVAddress(k); ok {
			return nil
		}
		err = tx.PutNode(lmdbstore.NodePut{Key: k, Type: []string{"file", "symbol", "decision"}[rng.IntN(3)],
			Payload: json.RawMessage(payload), Scope: []string{"", "repo"}[rng.IntN(2)], Valid: randomValidity(rng)})
	case r < 10:
		err = tx.DeleteNode(key())
	case r < 16:
		src, dst := key(), key()
		if src == dst {
			return nil // an item cannot supersede itself; the others may loop
		}
		err = tx.PutEdge(lmdbstore.EdgePut{Src: src, Rel: rels[rng.IntN(len(rels))], Dst: dst, Weight: float32(rng.IntN(5)) / 4})
	case r < 17:
		err = tx.DeleteEdge(key(), rels[rng.IntN(len(rels))], key())
	case r < 19:
		err = tx.PutKV(lmdbstore.KVPut{Scope: "s", Namespace: "ns", Key: fmt.Sprintf("k%d", rng.IntN(4)),
			Payload: json.RawMessage(fmt.Sprintf(`{"note":"n%d"}`, rng.IntN(9))), Valid: randomValidity(rng)})
	default:
		err = tx.DeleteKV("s", "ns", fmt.Sprintf("k%d", rng.IntN(4)))
	}
	if isNotFound(err) {
		return nil
	}
	return err
}

// TestIncrementalExportIsFullExport: over random stores and random deltas,
// an export started from an earlier export (any earlier revision, at a
// valid-at time at or after the base's) is byte for byte the full export
// of the same revision and valid-at time, with the index sections and
// PageRank; its valid-until is never later than the full export's. Most
// exports must actually start from the base, or the test would prove
// nothing.
func TestIncrementalExportIsFullExport(t *testing.T) {
	opts := snapshot.WriterOptions{Extra: engines.PageRankSection}
	var fromBase, total, pastFromBase int
	seeds := uint64(12)
	if raceEnabled {
		seeds = 3
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		s := newStore(t)
		type export struct {
			rev lmdbstore.Revision
			at  int // index in baseTimes
			m   storesnap.InMemory
		}
		var exports []export
		at := 0
		for c := 0; c < 25; c++ {
			if rng.IntN(12) == 0 {
				if _, err := s.Compact(); err != nil {
					t.Fatal(err)
				}
			} else {
				n := 1 + rng.IntN(4)
				if c == 0 {
					n = 60
				}
				if _, err := s.Update(lmdbstore.WriteMeta{RunID: "run", TaskID: fmt.Sprintf("t%d", rng.IntN(3))}, func(tx *lmdbstore.WriteTxn) error {
					for range n {
						if err := deltaOp(rng, tx); err != nil {
							return err
						}
					}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
			}
			rev := latestRev(t, s)
			// The valid-at time mostly moves forward, as the clock does;
			// now and then it jumps anywhere (a base from the future
			// must not be used).
			switch {
			case rng.IntN(10) == 0:
				at = rng.IntN(len(baseTimes))
			case rng.IntN(5) == 0:
				at = min(at+1, len(baseTimes)-1)
			}
			f := lmdbstore.StatusFilter{ValidAt: baseTimes[at]}
			full, err := storesnap.ExportInMemory(s, lmdbstore.AtRevision(rev), f, opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range exports {
				bf, err := snapshot.FromBytes(b.m.Bytes)
				if err != nil {
					t.Fatal(err)
				}
				base := &storesnap.Base{File: bf, ValidAt: b.m.ValidAt, ValidUntil: b.m.ValidUntil}
				got, err := storesnap.ExportInMemoryFrom(s, lmdbstore.AtRevision(rev), f, opts, base)
				if err != nil {
					t.Fatal(err)
				}
				if total%3 == 0 {
					// A state that keeps nothing reads and merges at each pass.
					rescanned, fb, err := storesnap.ExportFromKeeping(s, lmdbstore.AtRevision(rev), f, opts, base, -1)
					if err != nil {
						t.Fatal(err)
					}
					if fb != got.FromBase || !bytes.Equal(rescanned, full.Bytes) {
						t.Fatalf("seed %d: export of rev %d from the base of rev %d keeping nothing (from base: %v) differs from the full export", seed, rev, b.rev, fb)
					}
				}
				total++
				if got.FromBase {
					fromBase++
				}
				if !bytes.Equal(got.Bytes, full.Bytes) {
					t.Fatalf("seed %d: export of rev %d at t%d from the base of rev %d at t%d (from base: %v) differs from the full export",
						seed, rev, at, b.rev, b.at, got.FromBase)
				}
				if !full.ValidUntil.IsZero() && (got.ValidUntil.IsZero() || got.ValidUntil.After(full.ValidUntil)) {
					t.Fatalf("seed %d: valid until %v from the base, %v in full", seed, got.ValidUntil, full.ValidUntil)
				}
			}
			if len(exports) >= 2 {
				// A past view (the log read up to it only) from an older base.
				view, b := exports[len(exports)-1].rev, exports[0]
				want, err := storesnap.ExportInMemory(s, lmdbstore.AtRevision(view), f, opts)
				if err != nil {
					t.Fatal(err)
				}
				bf, err := snapshot.FromBytes(b.m.Bytes)
				if err != nil {
					t.Fatal(err)
				}
				got, err := storesnap.ExportInMemoryFrom(s, lmdbstore.AtRevision(view), f, opts,
					&storesnap.Base{File: bf, ValidAt: b.m.ValidAt, ValidUntil: b.m.ValidUntil})
				if err != nil {
					t.Fatal(err)
				}
				if got.FromBase {
					pastFromBase++
				}
				if !bytes.Equal(got.Bytes, want.Bytes) {
					t.Fatalf("seed %d: export of past rev %d (latest %d) from the base of rev %d differs from the full export", seed, view, rev, b.rev)
				}
			}
			exports = append(exports, export{rev: rev, at: at, m: full})
			if len(exports) > 6 {
				exports = exports[1:]
			}
		}
	}
	t.Logf("%d of %d exports started from their base; %d of past views", fromBase, total, pastFromBase)
	if fromBase*3 < total || pastFromBase == 0 {
		t.Fatalf("only %d of %d exports started from their base, %d of past views", fromBase, total, pastFromBase)
	}
}

// exportFromPrevious exports s's latest revision at validAt in full and
// from the export of the revision before it.
func exportFromPrevious(t *testing.T, s *lmdbstore.Store, validAt time.Time) (full, got storesnap.InMemory) {
	t.Helper()
	rev := latestRev(t, s)
	f := lmdbstore.StatusFilter{ValidAt: validAt}
	prev, err := storesnap.ExportInMemory(s, lmdbstore.AtRevision(rev-1), f, snapshot.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bf, err := snapshot.FromBytes(prev.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if full, err = storesnap.ExportInMemory(s, lmdbstore.AtRevision(rev), f, snapshot.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, err = storesnap.ExportInMemoryFrom(s, lmdbstore.AtRevision(rev), f, snapshot.WriterOptions{},
		&storesnap.Base{File: bf, ValidAt: prev.ValidAt, ValidUntil: prev.ValidUntil}); err != nil {
		t.Fatal(err)
	}
	return full, got
}

// TestIncrementalExportUnsupersedes: an item the base left out as
// superseded, with no edge but the supersedes edge deleted since, is
// exported again (read from the store: the log names it).
func TestIncrementalExportUnsupersedes(t *testing.T) {
	s := newStore(t)
	update := func(fn func(tx *lmdbstore.WriteTxn) error) {
		if _, err := s.Update(lmdbstore.WriteMeta{}, fn); err != nil {
			t.Fatal(err)
		}
	}
	update(func(tx *lmdbstore.WriteTxn) error {
		for _, k := range []string{"dec:new", "dec:old"} {
			if err := tx.PutNode(lmdbstore.NodePut{Key: k, Type: "decision", Payload: json.RawMessage(`{"text":"` + k + `"}`)}); err != nil {
				return err
			}
		}
		return tx.PutEdge(lmdbstore.EdgePut{Src: "dec:new", Rel: roles.RelSupersedes, Dst: "dec:old"})
	})
	update(func(tx *lmdbstore.WriteTxn) error { return tx.DeleteEdge("dec:new", roles.RelSupersedes, "dec:old") })
	full, got := exportFromPrevious(t, s, baseTimes[0])
	if !got.FromBase {
		t.Fatal("the export did not start from its base")
	}
	if !bytes.Equal(got.Bytes, full.Bytes) {
		t.Fatalf("the export from the base differs from the full export:\nfull %v\ngot  %v", readView(t, full.Bytes), readView(t, got.Bytes))
	}
	if v := readView(t, got.Bytes); v.Nodes["dec:old"] != "live" {
		t.Fatalf("dec:old is %q, want live", v.Nodes["dec:old"])
	}
}
