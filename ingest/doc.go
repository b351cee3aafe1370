// Package ingest turns a Go source tree and its git history into memctl
// graph memory.
//
// Ingest happens in two independent halves:
//
//   - Extraction (ExtractGo, ExtractGit) reads the tree and builds a Graph:
//     nodes with canonical keys (SPEC.md §9), types and JSON payloads, and
//     edges between them. It never touches the store, so it is tested on its
//     own against golden files.
//   - Writing (WriteGo, WriteGit) diffs a Graph against what the store holds
//     and writes only the difference, in one store revision. Writing the same
//     Graph twice writes nothing the second time (Commit.Rev == 0).
//
// Invariants:
//   - A Graph is deterministic: the same tree gives byte-identical payloads
//     and the same node and edge sets, whatever the map iteration order or
//     the number of CPUs. Payloads never contain wall-clock times of the
//     ingest itself.
//   - Every edge a Graph holds has both endpoints among its nodes.
//   - Ownership: `ingest go` owns every dir:, pkg: and sym: node, every file:
//     node whose payload has a "hash" (a Go file it wrote), the node
//     "ingest:go", and every edge of the relations it writes (GoRelations)
//     whose source is a node it owns. `ingest git` owns the "git" field of
//     file: payloads, file: nodes without a "hash", and every co_changed
//     edge. Neither half deletes or rewrites anything the other owns, so
//     they can be run in any order and any number of times.
package ingest
