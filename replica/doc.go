// Package replica binds a memctl store to a NATS JetStream stream: one
// ordered history for many machines (SPEC.md §13).
//
// Invariants: a revision is published (the stream accepted it with the
// expected last sequence) before it commits locally; a revision read from
// the stream is applied only if it is the next one, decodes, holds its crc
// and replays to exactly the operations it lists; credentials are never
// stored or printed. lmdbstore knows nothing of NATS: it calls a Remote
// through lmdbstore.Replicator.
package replica
