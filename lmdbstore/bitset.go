package lmdbstore

// bitSet is a set of the integers 0..n-1, a bit each: what a bulk load
// knows per operation (changed, final, may have a record) at an eighth of
// a []bool's size, and without the 4-byte position maps a []bool by
// operation needed to be set from a node's or an edge's index.
//
// Setting bits of one word from two goroutines races; a load sets each
// set's bits from one goroutine.
type bitSet []uint64

// newBitSet is an empty set of 0..n-1.
func newBitSet(n int) bitSet { return make(bitSet, (n+63)/64) }

// set adds i.
func (s bitSet) set(i uint32) { s[i>>6] |= 1 << (i & 63) }

// has reports whether i is in s.
func (s bitSet) has(i uint32) bool { return s[i>>6]&(1<<(i&63)) != 0 }
