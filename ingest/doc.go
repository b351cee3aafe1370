// Package ingest turns a code tree and its git history into memctl graph
// memory. Go is read here, type-checked through go/types (with a
// syntax-only fallback); Python, TypeScript/JavaScript and Rust are read
// by the tree-sitter front-ends of package ingest/treesitter, which build
// the same Graph; package ingest/codetree runs them all over one tree.
// This package holds what they share: the Graph model, canonical keys
// (SPEC.md §9), the walk, and the writer.
//
// Ingest happens in two independent halves:
//
//   - Extraction (ExtractGo, ExtractGit, and treesitter's extractors) reads
//     the tree and builds a Graph: nodes with canonical keys (SPEC.md §9),
//     types and JSON payloads, and edges between them. It never touches the
//     store, so it is tested on its own against golden files.
//   - Writing (WriteGo, WriteCode, WriteGit) diffs a Graph against what the
//     store holds and writes only the difference, in one store revision.
//     Writing the same Graph twice writes nothing the second time
//     (Commit.Rev == 0).
//
// The relations ingest writes are rows of the roles vocabulary (package
// roles): a code ingest owns every relation of the structure and usage
// roles (GoRelations), and the writer registers those the store lacks as
// their rows define them.
//
// Invariants:
//   - A Graph is deterministic: the same tree gives byte-identical payloads
//     and the same node and edge sets, whatever the map iteration order or
//     the number of CPUs. Payloads never contain wall-clock times of the
//     ingest itself.
//   - Every edge a Graph holds has both endpoints among its nodes.
//   - Ownership (SPEC.md §9.5, OwnerOf): the code ingest of a language
//     owns that language's pkg: and sym: nodes (Go's keys carry no tag, the
//     others start with their LangTags tag), every file: node whose payload
//     has a "hash" and names the language ("lang", Go when absent), the
//     node IngestKey(lang), and every edge of the relations it writes
//     (GoRelations) whose source is a node it owns; dir: nodes are shared,
//     recomputed by every code ingest from all languages' files. `ingest git` owns the "git" field of
//     file: payloads, file: nodes without a "hash", and every co_changed
//     edge. Neither half deletes or rewrites anything the other owns, so
//     they can be run in any order and any number of times.
package ingest
