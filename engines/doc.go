// Package engines answers ranked-relatedness questions over a mounted
// snapshot: seed finding, spreading activation, standing-wave resonance,
// PageRank and impact (blast radius). SPEC.md section 8 defines exactly what
// each engine computes; this package is that definition in code.
//
// Invariants:
//   - Engines read the snapshot's CSR arrays in place through *csr.Graph and
//     never copy the graph. They do no I/O and keep no global state.
//   - An Engine is immutable after New and safe for concurrent use. Per-query
//     scratch (epoch-stamped arrays, queues, heaps) comes from a sync.Pool, so
//     a query costs in proportion to the nodes and edges it touches, not to
//     the size of the graph (PageRank, which is global, is the exception).
//     A query may do independent parts of its work on a second goroutine
//     (the related profile's lexical similarity beside its walk); it waits
//     for them before it returns, and each writes only its own buffers.
//   - Every node index read from the graph is checked against NumNodes before
//     it is used; an out-of-range index or any error from the reader comes
//     back as an error (the reader's typed corruption error where it has one,
//     otherwise ErrCorrupt). Bad input never panics.
//   - Results are deterministic: the same query on the same snapshot gives
//     the same scores bit for bit, ordered by score descending and then by
//     node index (= NodeID order) ascending.
//   - Edge weights are clamped to [0, 1] (NaN and negatives count as 0), so a
//     signal never grows along a path; that is what lets the heap strategy of
//     activation agree exactly with the wavefront strategy.
package engines
