// Package lmdbstore is memctl's source of truth: an LMDB environment with
// one named database (keyspace) per record kind, an append log of
// revisions, packed adjacency chunks, and point-in-time reads. The byte
// layout of every keyspace is in SPEC.md §2; the adjacency chunks are
// package adjacency's (SPEC.md §3).
//
// Invariants:
//   - Every write transaction that writes anything commits exactly one
//     revision (the previous one + 1) with a strictly increasing commit time,
//     and appends one log record listing its operations in order.
//   - The latest version of a node, edge or kv entry lives in n/e/kv; each
//     version it replaced lives in hist under its own revision. An edge
//     version is also one entry in the out list of its source and the in
//     list of its destination (out/in are mirror images).
//   - A node id is IDOf(canonical key); ids maps every id ever written back
//     to its key, and a second key with the same id is refused (a collision
//     fails the whole transaction).
//   - Every stored value starts with a format byte, so no value is empty
//     (lmdb-go faults on empty values under RawRead), and ends with the
//     CRC-32C of everything before it (sealValue; adjacency.Encode for
//     chunks). Every decode verifies it first (unsealValue, openValue,
//     adjacency.Iterator.Reset), so a damaged value is reported as a
//     *CorruptionError, never misread.
//   - Caches never change what is stored: View reuses reset read-only
//     transactions and their cursors (readpool.go; parked ones are reset, so
//     map resizes see none live, and Close aborts them); reads resolve keys
//     and write transactions skip the ids lookup through the committed-ids
//     cache (keycache.go: ids entries never change, and only entries read
//     by a read-only transaction or committed are cached); consecutive adjacency inserts to one node are applied in
//     memory and written once (adjbuf.go), byte for byte as the unbuffered
//     path writes them, before any adjacency read in the transaction and
//     before commit.
//
// Caveats for callers:
//   - RawRead: reads decode straight from LMDB's memory map. Slices handed to
//     scan callbacks (and anything not documented as copied) are valid only
//     inside the callback / transaction. Returned Node, Edge, KV values are
//     copies.
//   - One writer: LMDB serialises write transactions across processes; this
//     package also serialises them within a process. Write transactions run
//     on one locked OS thread (lmdb-go's Env.Update) — never call Update
//     from inside View or another Update.
//   - Map size: the map starts at Options.MapSize (default 1 GiB, or twice
//     the file) and doubles on MDB_MAP_FULL, up to Options.MaxMapSize
//     (default 1 TiB), with no transaction of this process live; a growth by
//     another process is adopted on MDB_MAP_RESIZED. The Update callback may
//     therefore run more than once: it must have no side effects outside tx.
//   - Adjacency scans call LMDB from this package's C code through
//     lmdb-go's unexported cursor and transaction handles (chunkscan.go,
//     as cfault.go reaches the environment's): lmdb-go stays pinned at
//     v1.9.4, and a layout without those handles fails the scan with an
//     error naming it.
//   - Never open the same store twice in one process (closing either drops
//     the process's LMDB locks); multi-process tests use subprocesses.
//   - After Close, View fails with ErrClosed; no View or Update may be
//     running when Close is called.
//   - A store bound to a remote (replica.go, SPEC.md §13) calls its
//     Options.Replicator inside the write transaction, holding the
//     writer lock for the publish round trip: the revision commits only
//     if the remote took it. This package never imports the remote's
//     client.
//
// Where things go:
//   - A keyspace is a file named after it (node.go, edge.go, adj.go,
//     kv.go, hist.go, ids.go, rel.go, log.go, meta.go, ts.go, revs.go),
//     headed by its SPEC.md §2 layout, then its key builders, codec, reads
//     and writes. A new keyspace is one row in the keyspace table
//     (keyspace.go: it opens the DBI and gives the fuzz hooks their
//     decoders) plus such a file, and its walk in check.go.
//   - What every keyspace shares (names, format bytes, checksum trailer,
//     record envelope, decoder) is in records.go; transaction lifecycle
//     (ReadTxn, WriteTxn, View, Update, commit) in txn.go.
//   - Put validation lives beside the put it checks: checkNodePut
//     (node.go) and checkEdgePut (edge.go) are called by both WriteTxn and
//     Bulk, so a rule added there holds for ordinary and bulk writes.
//   - Walks across keyspaces stay in their own files: check.go,
//     history.go, compact.go, vacuum.go.
package lmdbstore
