// Package contextpack answers "what applies here?" in one call: for a
// target (a canonical key, a repository path or a query) it gathers the
// constraints, decisions and procedures that apply to it, its ranked code
// neighbourhood, what changed since the previous run and what earlier
// tasks attempted, and renders them, most important first, within a token
// budget (SPEC.md §12).
//
// Invariants:
//   - Every item carries its provenance: the key it names, the revision,
//     commit time, run and task that wrote it; code items their path and
//     line span.
//   - A pack is computed from one read transaction at one revision (the
//     view); the engine snapshot that ranks "Related" is one whose ranking
//     graph equals the graph at that view (never a stale one: package
//     enginesnap's Ranking rules).
//   - The Markdown rendering never exceeds the budget in o200k_base tokens
//     (package bpe), header and footer included; the JSON form holds
//     exactly the items the Markdown shows.
//   - An Assembler is safe for concurrent use and is meant to be held open
//     by a long-lived process (the MCP server): its enginesnap.Provider
//     (its own, or one the process shares) keeps the engine snapshot
//     mapped between calls.
//
// contextpack reads the store through lmdbstore and ranks through engines;
// it never writes to the store. Its only file is the engine snapshot its
// provider keeps beside the store (enginesnap.SnapshotFile).
package contextpack
