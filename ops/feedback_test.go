package ops

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/memctl/memctl/lmdbstore"
)

// feedbackModel is the overlay as a plain map, written from SPEC.md
// §8.2.2 without ops' code: a clock, and per pair the strength and the
// clock of its last update.
type feedbackModel struct {
	clock uint64
	pairs map[[2]string][2]float64 // {W, T}
}

func (m *feedbackModel) clone() *feedbackModel {
	c := &feedbackModel{clock: m.clock, pairs: map[[2]string][2]float64{}}
	for k, v := range m.pairs {
		c.pairs[k] = v
	}
	return c
}

func (m *feedbackModel) apply(reqs []FeedbackRequest, p FeedbackParams) {
	m.clock++
	for _, q := range reqs {
		for _, l := range []struct {
			items []string
			to    float64
		}{{q.Useful, 1}, {q.Useless, -1}} {
			done := map[string]bool{}
			for _, it := range l.items {
				if done[it] {
					continue
				}
				done[it] = true
				k := [2]string{q.Target, it}
				old := m.pairs[k]
				w := old[0] * math.Pow(2, -(float64(m.clock)-old[1])/p.HalfLife)
				if old == ([2]float64{}) {
					w = 0
				}
				w = w + p.Rate*(l.to-w)
				m.pairs[k] = [2]float64{math.Max(-1, math.Min(1, w)), float64(m.clock)}
			}
		}
	}
}

// TestFeedbackOverlayAtEveryRevision replays random histories of feedback
// writes, refused feedback and unrelated writes, and reads the overlay at
// every revision against the model.
func TestFeedbackOverlayAtEveryRevision(t *testing.T) {
	keys := []string{"file:a.go", "file:b/c.go", "sym:x%2Fy", "file:d.go", "kv:memctl/x/y", "a/b/c"}
	p := DefaultFeedbackParams()
	p.HalfLife = 3 // decay shows within a short history
	for seed := range uint64(8) {
		rng := rand.New(rand.NewPCG(seed, 25))
		s := testStore(t)
		model := &feedbackModel{pairs: map[[2]string][2]float64{}}
		at := map[lmdbstore.Revision]*feedbackModel{}
		var fbRevs []lmdbstore.Revision
		for step := range 40 {
			switch rng.IntN(5) {
			case 0: // an unrelated write
				c, err := s.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
					return tx.PutKV(lmdbstore.KVPut{Scope: "memctl", Namespace: "other", Key: keys[rng.IntN(len(keys))], Payload: json.RawMessage(`{"n":` + string(rune('0'+step%10)) + `}`)})
				})
				if err != nil {
					t.Fatal(err)
				}
				if c.Rev != 0 {
					at[c.Rev] = model.clone()
				}
			case 1: // refused: an item both useful and useless
				k := keys[rng.IntN(len(keys))]
				_, err := Feedback(s, lmdbstore.WriteMeta{}, []FeedbackRequest{{Target: "file:a.go", Useful: []string{k}, Useless: []string{k}}}, p)
				if k != "file:a.go" && !errors.Is(err, ErrInvalid) {
					t.Fatalf("both useful and useless: err = %v", err)
				}
			default:
				var reqs []FeedbackRequest
				for range 1 + rng.IntN(3) {
					q := FeedbackRequest{Target: keys[rng.IntN(len(keys))]}
					for range rng.IntN(4) {
						if k := keys[rng.IntN(len(keys))]; k != q.Target {
							q.Useful = append(q.Useful, k)
						}
					}
					for range rng.IntN(3) {
						if k := keys[rng.IntN(len(keys))]; k != q.Target && !contains(q.Useful, k) {
							q.Useless = append(q.Useless, k)
						}
					}
					if len(q.Useful)+len(q.Useless) > 0 {
						reqs = append(reqs, q)
					}
				}
				if len(reqs) == 0 {
					continue
				}
				c, err := Feedback(s, lmdbstore.WriteMeta{}, reqs, p)
				if err != nil {
					t.Fatal(err)
				}
				model.apply(reqs, p)
				at[c.Rev] = model.clone()
				fbRevs = append(fbRevs, c.Rev)
			}
		}
		err := s.View(func(r *lmdbstore.ReadTxn) error {
			for rev, want := range at {
				got, err := ReadFeedback(r, lmdbstore.AtRevision(rev))
				if err != nil {
					return err
				}
				if got.Clock != want.clock {
					t.Errorf("seed %d rev %d: clock %d, want %d", seed, rev, got.Clock, want.clock)
				}
				flat := map[[2]string][2]float64{}
				for target, items := range got.Pairs {
					for item, e := range items {
						flat[[2]string{target, item}] = [2]float64{e.W, float64(e.T)}
						wantS := want.pairs[[2]string{target, item}][0] * math.Pow(2, -(float64(want.clock)-float64(e.T))/p.HalfLife)
						if s := got.Strength(target, item, p); math.Abs(s-wantS) > 1e-12 {
							t.Errorf("seed %d rev %d: strength %s→%s %v, want %v", seed, rev, target, item, s, wantS)
						}
					}
				}
				if d := cmp.Diff(want.pairs, flat, cmpopts.EquateApprox(0, 1e-12)); d != "" {
					t.Errorf("seed %d rev %d (-want +got):\n%s", seed, rev, d)
				}
			}
			// Every feedback revision is in diff-since: put_kv of the
			// clock and of the pairs it moved, nothing else.
			for _, rev := range fbRevs {
				clock := false
				err := r.RevisionOps(rev, func(op lmdbstore.Op) error {
					if op.Kind != lmdbstore.OpPutKV || op.Scope != FeedbackScope || op.Namespace != FeedbackNamespace {
						t.Errorf("seed %d rev %d: op %+v", seed, rev, op)
					}
					clock = clock || op.Key == FeedbackClockKey
					return nil
				})
				if err != nil {
					return err
				}
				if !clock {
					t.Errorf("seed %d rev %d: the clock did not tick", seed, rev)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if rep, err := s.Check(); err != nil || len(rep.Problems) > 0 {
			t.Fatalf("check: %v %v", err, rep.Problems)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestFeedbackRefused(t *testing.T) {
	s := testStore(t)
	p := DefaultFeedbackParams()
	for name, reqs := range map[string][]FeedbackRequest{
		"nothing":        nil,
		"no target":      {{Useful: []string{"b"}}},
		"no items":       {{Target: "a"}},
		"empty item":     {{Target: "a", Useful: []string{""}}},
		"self":           {{Target: "a", Useful: []string{"a"}}},
		"useful+useless": {{Target: "a", Useful: []string{"b"}, Useless: []string{"b"}}},
	} {
		if _, err := Feedback(s, lmdbstore.WriteMeta{}, reqs, p); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	bad := p
	bad.Rate = 0
	if _, err := Feedback(s, lmdbstore.WriteMeta{}, []FeedbackRequest{{Target: "a", Useful: []string{"b"}}}, bad); !errors.Is(err, ErrInvalid) {
		t.Errorf("rate 0: err = %v", err)
	}
	// A foreign entry in the reserved namespace is named, never misread.
	_, err := s.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
		return tx.PutKV(lmdbstore.KVPut{Scope: FeedbackScope, Namespace: FeedbackNamespace, Key: "a/b", Payload: json.RawMessage(`{"w":3,"t":1}`)})
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.View(func(r *lmdbstore.ReadTxn) error { _, err := ReadFeedback(r, lmdbstore.At{}); return err })
	if err == nil {
		t.Fatal("a strength of 3 was read")
	}
}

// TestFeedbackKeys: keys with "/" and "%" round-trip; other spellings are
// not pair keys.
func TestFeedbackKeys(t *testing.T) {
	for _, pair := range [][2]string{{"a", "b"}, {"file:x/y.go", "sym:p%2Fq.F"}, {"%", "/"}} {
		k := FeedbackKey(pair[0], pair[1])
		if tg, it, ok := parseFeedbackKey(k); !ok || tg != pair[0] || it != pair[1] {
			t.Errorf("%q: %q %q %v", k, tg, it, ok)
		}
	}
	for _, k := range []string{"clock", "a/b/c", "/b", "a/", "a%2fb/c", "a%zz/b"} {
		if _, _, ok := parseFeedbackKey(k); ok {
			t.Errorf("%q parsed as a pair", k)
		}
	}
}
