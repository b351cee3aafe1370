package ops

// Feedback (SPEC.md §8.2.2): what an agent found useful or useless for a
// target teaches the related ranking. The overlay is kv entries of the
// reserved scope memctl, namespace feedback, so it is revisioned, read at
// any revision and reported by diff-since like every other record:
//
//	key                         payload             meaning
//	clock                       {"t":T}             feedback revisions so far (T ≥ 1)
//	esc(target) "/" esc(item)   {"t":T,"w":W}       strength W ∈ [−1, 1] as of clock T
//
// esc replaces "%" with "%25" and "/" with "%2F" (as kv addresses do,
// SPEC.md §1), so the one unescaped "/" splits a pair and "clock", which
// has none, is never a pair. A pair's strength at clock C is
// W × 2^(−(C − T)/H): it halves every H feedback revisions. Each feedback
// write is one revision that ticks the clock once and moves the strength
// of every pair it names: useful W ← W + α(1 − W), useless
// W ← W − α(1 + W), W decayed to the new clock first.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/lmdbstore"
)

// Where the overlay lives (SPEC.md §2 "Reserved kv entries").
const (
	FeedbackScope     = "memctl"
	FeedbackNamespace = "feedback"
	FeedbackClockKey  = "clock"
)

// FeedbackParams are the overlay's rates. Writers and readers of one store
// must use the same HalfLife (the decay is applied at both ends).
type FeedbackParams struct {
	Rate     float64 // α ∈ (0, 1]: how far one feedback moves a strength towards ±1
	HalfLife float64 // H > 0: feedback revisions after which a strength has halved
	Floor    float64 // a strength whose magnitude is below it is not read (>= 0)
	Weight   float64 // φ >= 0: the link weight of a useful item in the walk (engines.RelatedParams.FeedbackWeight)
}

// The defaults, chosen with `eval cochange --feedback` on the selection
// window (SPEC.md §8.2.2, BENCHMARKS.md "Feedback").
const (
	DefaultFeedbackRate     = 0.5
	DefaultFeedbackHalfLife = 80
	DefaultFeedbackFloor    = 0.01
)

// DefaultFeedbackParams returns the measured defaults.
func DefaultFeedbackParams() FeedbackParams {
	return FeedbackParams{Rate: DefaultFeedbackRate, HalfLife: DefaultFeedbackHalfLife, Floor: DefaultFeedbackFloor, Weight: engines.DefaultFeedbackWeight}
}

func (p FeedbackParams) validate() error {
	switch {
	case !(p.Rate > 0 && p.Rate <= 1):
		return invalidf("feedback rate %v not in (0, 1]", p.Rate)
	case !(p.HalfLife > 0) || math.IsInf(p.HalfLife, 0):
		return invalidf("feedback half-life %v must be > 0", p.HalfLife)
	case !(p.Floor >= 0 && p.Floor < 1):
		return invalidf("feedback floor %v not in [0, 1)", p.Floor)
	case !(p.Weight >= 0) || math.IsInf(p.Weight, 0):
		return invalidf("feedback weight %v must be >= 0", p.Weight)
	}
	return nil
}

// FeedbackRequest is one target's feedback: the items of an answer about
// it (a related or context answer) that were useful or useless.
type FeedbackRequest struct {
	Target  string   `json:"target"`
	Useful  []string `json:"useful,omitempty"`
	Useless []string `json:"useless,omitempty"`
}

func (q FeedbackRequest) check() error {
	if q.Target == "" {
		return invalidf("target must not be empty")
	}
	if len(q.Useful) == 0 && len(q.Useless) == 0 {
		return invalidf("feedback for %s names no useful and no useless item", q.Target)
	}
	for _, it := range append(slices.Clip(q.Useful), q.Useless...) {
		switch {
		case it == "":
			return invalidf("feedback for %s: an item must not be empty", q.Target)
		case it == q.Target:
			return invalidf("feedback for %s: the target is not an item of its own answer", q.Target)
		}
	}
	for _, it := range q.Useful {
		if slices.Contains(q.Useless, it) {
			return invalidf("feedback for %s: %s is both useful and useless", q.Target, it)
		}
	}
	return nil
}

// FeedbackEntry is one pair's stored state: strength W as of clock T.
type FeedbackEntry struct {
	T uint64  `json:"t"`
	W float64 `json:"w,omitempty"` // absent in the clock's payload
}

// FeedbackOverlay is the overlay at one revision: the clock and every
// pair's entry, by target then item.
type FeedbackOverlay struct {
	Clock uint64
	Pairs map[string]map[string]FeedbackEntry
}

// NewFeedbackOverlay is the empty overlay (a store that never had
// feedback).
func NewFeedbackOverlay() *FeedbackOverlay {
	return &FeedbackOverlay{Pairs: map[string]map[string]FeedbackEntry{}}
}

// Len is the number of pairs.
func (o *FeedbackOverlay) Len() int {
	n := 0
	for _, items := range o.Pairs {
		n += len(items)
	}
	return n
}

// decayed is e's strength at clock c.
func (e FeedbackEntry) decayed(c uint64, halfLife float64) float64 {
	if c <= e.T {
		return e.W
	}
	return e.W * math.Exp2(-float64(c-e.T)/halfLife)
}

// Strength is the strength of target → item at the overlay's clock (0
// when the pair has none).
func (o *FeedbackOverlay) Strength(target, item string, p FeedbackParams) float64 {
	e, ok := o.Pairs[target][item]
	if !ok {
		return 0
	}
	return e.decayed(o.Clock, p.HalfLife)
}

// Apply is one feedback revision on the overlay: the clock ticks once and
// every pair the requests name moves (in order: requests as given, each
// one's useful items, then its useless ones; an item named twice in one
// list moves once). It returns the pairs it set, in that order.
func (o *FeedbackOverlay) Apply(reqs []FeedbackRequest, p FeedbackParams) ([][2]string, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	if len(reqs) == 0 {
		return nil, invalidf("no feedback")
	}
	for _, q := range reqs {
		if err := q.check(); err != nil {
			return nil, err
		}
	}
	o.Clock++
	var set [][2]string
	move := func(target, item string, to float64) {
		items := o.Pairs[target]
		if items == nil {
			items = map[string]FeedbackEntry{}
			o.Pairs[target] = items
		}
		w := items[item].decayed(o.Clock, p.HalfLife)
		w += p.Rate * (to - w)
		items[item] = FeedbackEntry{T: o.Clock, W: max(-1, min(1, w))}
		pair := [2]string{target, item}
		if !slices.Contains(set, pair) {
			set = append(set, pair)
		}
	}
	for _, q := range reqs {
		for _, list := range []struct {
			items []string
			to    float64
		}{{q.Useful, 1}, {q.Useless, -1}} {
			seen := map[string]bool{}
			for _, it := range list.items {
				if !seen[it] {
					seen[it] = true
					move(q.Target, it, list.to)
				}
			}
		}
	}
	return set, nil
}

// Links resolves the overlay for a query's seeds on a snapshot: each
// seed's pairs whose items the snapshot holds and whose strength at the
// clock is at least the floor in magnitude, by item node index.
func (o *FeedbackOverlay) Links(g *csr.Graph, seeds []engines.Seed, p FeedbackParams) (engines.Feedback, error) {
	if o == nil || len(o.Pairs) == 0 {
		return nil, nil
	}
	out := engines.Feedback{}
	for _, sd := range seeds {
		if _, done := out[sd.Node]; done {
			continue
		}
		key, err := g.Key(sd.Node)
		if err != nil {
			return nil, err
		}
		var links []engines.FeedbackLink
		for item, e := range o.Pairs[key] {
			w := e.decayed(o.Clock, p.HalfLife)
			if math.Abs(w) < p.Floor || w == 0 {
				continue
			}
			n, ok, err := g.LookupKey(item)
			if err != nil {
				return nil, err
			}
			if ok {
				links = append(links, engines.FeedbackLink{Node: n, W: w})
			}
		}
		// Map order is random; the walk sums in link order.
		slices.SortFunc(links, func(a, b engines.FeedbackLink) int { return int(a.Node) - int(b.Node) })
		out[sd.Node] = links
	}
	return out, nil
}

var feedbackEscaper = strings.NewReplacer("%", "%25", "/", "%2F")
var feedbackUnescaper = strings.NewReplacer("%2F", "/", "%25", "%")

// FeedbackKey is the kv key of the pair target → item.
func FeedbackKey(target, item string) string {
	return feedbackEscaper.Replace(target) + "/" + feedbackEscaper.Replace(item)
}

// parseFeedbackKey splits a pair key; ok is false for anything that is
// not exactly FeedbackKey's spelling of a pair.
func parseFeedbackKey(k string) (target, item string, ok bool) {
	t, i, found := strings.Cut(k, "/")
	if !found || strings.Contains(i, "/") {
		return "", "", false
	}
	target, item = feedbackUnescaper.Replace(t), feedbackUnescaper.Replace(i)
	if target == "" || item == "" || FeedbackKey(target, item) != k {
		return "", "", false
	}
	return target, item, true
}

// ReadFeedback reads the overlay at a revision. An entry of the namespace
// that is not an overlay entry is an error naming it.
func ReadFeedback(r *lmdbstore.ReadTxn, at lmdbstore.At) (*FeedbackOverlay, error) {
	kvs, err := r.ListKV(FeedbackScope, FeedbackNamespace, at)
	if err != nil {
		return nil, err
	}
	o := NewFeedbackOverlay()
	for _, kv := range kvs {
		if err := o.add(kv.Key, kv.Payload); err != nil {
			return nil, err
		}
	}
	return o, o.checkClock()
}

// add decodes one kv entry of the namespace into o.
func (o *FeedbackOverlay) add(key string, payload []byte) error {
	bad := func(why string) error {
		return fmt.Errorf("feedback overlay: kv %s/%s/%s: %s", FeedbackScope, FeedbackNamespace, key, why)
	}
	var e FeedbackEntry
	dec := json.NewDecoder(strings.NewReader(string(payload)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return bad(err.Error())
	}
	if key == FeedbackClockKey {
		if e.W != 0 {
			return bad("the clock has no strength")
		}
		o.Clock = e.T
		return nil
	}
	target, item, ok := parseFeedbackKey(key)
	switch {
	case !ok:
		return bad("not a pair key")
	case !(e.W >= -1 && e.W <= 1):
		return bad(fmt.Sprintf("strength %v not in [-1, 1]", e.W))
	}
	if o.Pairs[target] == nil {
		o.Pairs[target] = map[string]FeedbackEntry{}
	}
	o.Pairs[target][item] = e
	return nil
}

// checkClock reports a pair updated at a clock the overlay has not
// reached (or at 0).
func (o *FeedbackOverlay) checkClock() error {
	for target, items := range o.Pairs {
		for item, e := range items {
			if e.T == 0 || e.T > o.Clock {
				return fmt.Errorf("feedback overlay: kv %s/%s/%s: clock %d beyond the overlay's %d",
					FeedbackScope, FeedbackNamespace, FeedbackKey(target, item), e.T, o.Clock)
			}
		}
	}
	return nil
}

// Feedback commits one feedback revision: the clock and the pairs the
// requests move, as Apply moves them from the overlay at the latest
// revision.
func Feedback(s *lmdbstore.Store, meta lmdbstore.WriteMeta, reqs []FeedbackRequest, p FeedbackParams) (lmdbstore.Commit, error) {
	return s.Update(meta, func(tx *lmdbstore.WriteTxn) error {
		// Only the clock and the pairs the requests name are read: a
		// write costs what it moves, not the size of the overlay.
		o := NewFeedbackOverlay()
		get := func(key string) error {
			kv, err := tx.Reader().GetKV(FeedbackScope, FeedbackNamespace, key, lmdbstore.At{})
			if errors.Is(err, lmdbstore.ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			return o.add(key, kv.Payload)
		}
		if err := get(FeedbackClockKey); err != nil {
			return err
		}
		for _, q := range reqs {
			for _, it := range append(slices.Clip(q.Useful), q.Useless...) {
				if q.Target != "" && it != "" {
					if err := get(FeedbackKey(q.Target, it)); err != nil {
						return err
					}
				}
			}
		}
		if err := o.checkClock(); err != nil {
			return err
		}
		set, err := o.Apply(reqs, p)
		if err != nil {
			return err
		}
		put := func(key string, e FeedbackEntry) error {
			payload, err := json.Marshal(e)
			if err != nil {
				return err
			}
			if err := tx.PutKV(lmdbstore.KVPut{Scope: FeedbackScope, Namespace: FeedbackNamespace, Key: key, Payload: payload}); err != nil {
				return fmt.Errorf("feedback entry %s: %w", key, err)
			}
			return nil
		}
		if err := put(FeedbackClockKey, FeedbackEntry{T: o.Clock}); err != nil {
			return err
		}
		for _, pair := range set {
			if err := put(FeedbackKey(pair[0], pair[1]), o.Pairs[pair[0]][pair[1]]); err != nil {
				return err
			}
		}
		return nil
	})
}
