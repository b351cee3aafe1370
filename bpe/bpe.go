// Package bpe counts tokens of OpenAI's o200k_base byte-pair encoding (the
// GPT-4o family's), exactly as tiktoken does, with no download and no
// start-up cost: the vocabulary is a table embedded in the binary and read
// in place (table.go), generated from github.com/tiktoken-go/tokenizer,
// a pure-Go port of tiktoken.
//
// Invariants:
//   - Count(s) equals tiktoken's len(encode_ordinary(s)) for o200k_base
//     (special tokens are ordinary text); the tests check it against the
//     library on this repository's sources and on random text.
//   - An Encoding is immutable and safe for concurrent use.
//   - Counting never allocates per token; a piece found whole in the
//     vocabulary (most words) costs one hash lookup.
package bpe

import (
	"math"
	"sync"
	"unicode/utf8"
)

// Encoding is one byte-pair encoding.
type Encoding struct {
	name string
	t    table
	pool sync.Pool // *scratch
}

var (
	o200kOnce sync.Once
	o200k     *Encoding
)

// O200kBase is the o200k_base encoding. The first call validates the
// embedded table's header (constant time); it panics only if the binary was
// built with a damaged table, which the package's tests rule out.
func O200kBase() *Encoding {
	o200kOnce.Do(func() {
		t, err := newTable(o200kBaseTable)
		if err != nil {
			panic(err)
		}
		o200k = &Encoding{name: "o200k_base", t: t}
		o200k.pool.New = func() any { return new(scratch) }
	})
	return o200k
}

// Name is the encoding's tiktoken name.
func (e *Encoding) Name() string { return e.name }

// Count is the number of tokens s encodes to.
func (e *Encoding) Count(s string) int {
	n := 0
	e.encode(s, func(uint32) { n++ }, nil)
	return n
}

// CountUpTo is Count(s) when that is at most limit, and otherwise some
// number greater than limit: it stops encoding at the first piece that
// takes the count past limit. It tells whether s fits in limit tokens,
// and in how many, for about the price of the tokens that fit.
func (e *Encoding) CountUpTo(s string, limit int) int {
	n := 0
	e.encode(s, func(uint32) { n++ }, func() bool { return n > limit })
	return n
}

// Separate reports whether the split rules (split.go) put a piece boundary
// between a and b whatever else a and b hold, so that Count(a+b) =
// Count(a) + Count(b) and a caller may count the parts of a text apart and
// keep the counts of the parts that repeat. Two cases qualify (valid
// UTF-8 at the seam):
//   - a ends with a character other than white space and b begins with a
//     space (U+0020): a line's fields joined by " · ";
//   - a ends with a line feed and b begins with a character that is
//     neither white space nor '/': a line, then the next one.
//
// Why: the expression has no look-behind, so the pieces of b are the
// same alone and after a once a piece ends where b begins. In the first
// case the piece holding a's last character matches A1–A4 (A5–A7 match
// white space alone), and none of those goes on at a space: letters,
// marks and digits stop there, A4's run of other characters stops there
// and its tail takes only CR, LF and '/', and each alternative's optional
// leading character comes first. In the second, a's line feed ends an A4
// tail or an A5 run of CRs and LFs (a run of white space that holds a
// line feed is A5's before A6's or A7's), and neither goes on at a
// character that is not CR, LF or '/'. Nor does any piece of a look past
// its end: the only look-ahead is A6's, after a run of white space, which
// ends inside a. TestSeparate checks the sum against the reference
// library.
func (e *Encoding) Separate(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	last, w := utf8.DecodeLastRuneInString(a)
	first, fw := utf8.DecodeRuneInString(b)
	if last == utf8.RuneError && w <= 1 || first == utf8.RuneError && fw <= 1 {
		return false
	}
	if last == '\n' {
		return !isSpace(first) && first != '/'
	}
	return first == ' ' && !isSpace(last)
}

// Encode returns the token ids of s (tests and diagnostics).
func (e *Encoding) Encode(s string) []int {
	var ids []int
	e.encode(s, func(id uint32) { ids = append(ids, int(id)) }, nil)
	return ids
}

// Token is the bytes of token id ("" for an id outside the vocabulary).
func (e *Encoding) Token(id int) string {
	if id < 0 || uint64(id) >= uint64(e.t.n) {
		return ""
	}
	return e.t.token(uint32(id))
}

// Size is the number of tokens in the vocabulary.
func (e *Encoding) Size() int { return int(e.t.n) }

// encode yields the tokens of s, a piece at a time; it stops before the
// next piece once done (when not nil) reports true.
func (e *Encoding) encode(s string, yield func(uint32), done func() bool) {
	sc := e.pool.Get().(*scratch)
	defer e.pool.Put(sc)
	for rest := s; rest != "" && (done == nil || !done()); {
		n := splitO200k(rest)
		piece := rest[:n]
		rest = rest[n:]
		if id, ok := e.t.rank(piece); ok {
			yield(id)
			continue
		}
		e.merge(piece, sc, yield)
	}
}

// scratch is the reusable state of one merge.
type scratch struct {
	parts []part
	nodes []node
	heap  []candidate
}

type part struct {
	start int
	rank  uint32 // rank of the token piece[start:next-next start], or noRank
}

const noRank = math.MaxUint32

// longPiece is the piece length from which merge switches from the
// quadratic scan to the heap.
const longPiece = 128

// merge is tiktoken's byte-pair merge: start from single bytes, repeatedly
// merge the adjacent pair whose concatenation has the lowest rank (the
// leftmost among equals) until no pair is a token; every part is then a
// token. Pieces are mostly short words, numbers or runs of punctuation:
// those are scanned (quadratic, like tiktoken's own); long ones go through
// mergeHeap (n log n), which merges in the same order.
func (e *Encoding) merge(piece string, sc *scratch, yield func(uint32)) {
	if len(piece) >= longPiece {
		e.mergeHeap(piece, sc, yield)
		return
	}
	e.mergeScan(piece, sc, yield)
}

func (e *Encoding) mergeScan(piece string, sc *scratch, yield func(uint32)) {
	parts := sc.parts[:0]
	for i := 0; i <= len(piece); i++ {
		parts = append(parts, part{start: i, rank: noRank})
	}
	rankAt := func(i, skip int) uint32 {
		if i+skip+2 < len(parts) {
			if r, ok := e.t.rank(piece[parts[i].start:parts[i+skip+2].start]); ok {
				return r
			}
		}
		return noRank
	}
	for i := 0; i+2 < len(parts); i++ {
		parts[i].rank = rankAt(i, 0)
	}
	for len(parts) > 1 {
		min, at := uint32(noRank), -1
		for i := 0; i+1 < len(parts); i++ {
			if parts[i].rank < min {
				min, at = parts[i].rank, i
			}
		}
		if at < 0 {
			break
		}
		parts[at].rank = rankAt(at, 1)
		if at > 0 {
			parts[at-1].rank = rankAt(at-1, 1)
		}
		parts = append(parts[:at+1], parts[at+2:]...)
	}
	for i := 0; i+1 < len(parts); i++ {
		id, _ := e.t.rank(piece[parts[i].start:parts[i+1].start])
		yield(id)
	}
	sc.parts = parts[:0]
}

// node is a part boundary of mergeHeap's linked list; rank is that of the
// token this part and the next would form.
type node struct {
	prev, next int32
	rank       uint32
}

type candidate struct {
	rank uint32
	at   int32
}

func (a candidate) less(b candidate) bool {
	return a.rank < b.rank || a.rank == b.rank && a.at < b.at
}

// mergeHeap merges like the scan, picking the lowest (rank, position) pair
// from a min-heap; stale entries (a pair already merged away or whose rank
// changed) are skipped when popped.
func (e *Encoding) mergeHeap(piece string, sc *scratch, yield func(uint32)) {
	n := int32(len(piece))
	nodes := sc.nodes[:0]
	for i := int32(0); i <= n; i++ {
		nodes = append(nodes, node{prev: i - 1, next: i + 1, rank: noRank})
	}
	nodes[n].next = -1
	rankOf := func(i int32) uint32 {
		j := nodes[i].next
		if j < 0 || nodes[j].next < 0 {
			return noRank
		}
		if r, ok := e.t.rank(piece[i:nodes[j].next]); ok {
			return r
		}
		return noRank
	}
	h := sc.heap[:0]
	push := func(c candidate) {
		h = append(h, c)
		for i := len(h) - 1; i > 0; {
			p := (i - 1) / 2
			if !h[i].less(h[p]) {
				break
			}
			h[i], h[p] = h[p], h[i]
			i = p
		}
	}
	pop := func() candidate {
		top := h[0]
		last := len(h) - 1
		h[0] = h[last]
		h = h[:last]
		for i := 0; ; {
			l, r, m := 2*i+1, 2*i+2, i
			if l < len(h) && h[l].less(h[m]) {
				m = l
			}
			if r < len(h) && h[r].less(h[m]) {
				m = r
			}
			if m == i {
				break
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
		return top
	}
	for i := int32(0); i+2 <= n; i++ {
		if r := rankOf(i); r != noRank {
			nodes[i].rank = r
			push(candidate{r, i})
		}
	}
	for len(h) > 0 {
		c := pop()
		i := c.at
		if nodes[i].rank != c.rank {
			continue // stale
		}
		j := nodes[i].next
		k := nodes[j].next
		nodes[j].rank = noRank
		nodes[i].next = k
		if k >= 0 {
			nodes[k].prev = i
		}
		for _, b := range [2]int32{i, nodes[i].prev} {
			if b < 0 {
				continue
			}
			nodes[b].rank = rankOf(b)
			if nodes[b].rank != noRank {
				push(candidate{nodes[b].rank, b})
			}
		}
	}
	for i := int32(0); nodes[i].next >= 0; i = nodes[i].next {
		id, _ := e.t.rank(piece[i:nodes[i].next])
		yield(id)
	}
	sc.nodes, sc.heap = nodes[:0], h[:0]
}
