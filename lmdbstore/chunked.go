package lmdbstore

// chunked is a growing list held in fixed-size chunks: appending never
// copies what is there, so a list of hundreds of MB (a bulk load's edge
// operations) grows by a chunk at a time, with no moment where the old
// array and a larger copy are both live, and no slack beyond the last
// chunk. Element pointers stay valid while the list grows.
type chunked[T any] struct {
	chunks [][]T
	n      int
}

// chunkBits sets a chunk's length: 65,536 elements.
const chunkBits = 16

const chunkLen = 1 << chunkBits

// len is the number of elements.
func (c *chunked[T]) len() int { return c.n }

// at is element i (0 ≤ i < len).
func (c *chunked[T]) at(i int) *T { return &c.chunks[i>>chunkBits][i&(chunkLen-1)] }

// add appends v and returns its index.
func (c *chunked[T]) add(v T) int {
	if c.n>>chunkBits == len(c.chunks) {
		c.chunks = append(c.chunks, make([]T, 0, chunkLen))
	}
	last := &c.chunks[len(c.chunks)-1]
	*last = append(*last, v)
	c.n++
	return c.n - 1
}

// truncate keeps the first n elements (n ≤ len), releasing the chunks past
// them.
func (c *chunked[T]) truncate(n int) {
	keep := (n + chunkLen - 1) >> chunkBits
	clear(c.chunks[keep:])
	c.chunks = c.chunks[:keep]
	if keep > 0 {
		last := &c.chunks[keep-1]
		n0 := n - (keep-1)<<chunkBits
		clear((*last)[n0:])
		*last = (*last)[:n0]
	}
	c.n = n
}
