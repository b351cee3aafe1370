// Package eval measures how good memctl's answers are on real code and
// real history (SPEC §11).
//
// `eval impact` builds memory from a tree in a temporary store, exports a
// snapshot, and scores impact against an expectation computed from the
// graph's own edges and relation roles, not from the engine it scores.
//
// `eval cochange` replays the last N qualifying commits of a repository: for
// each one it builds memory as it was at the commit's parent (ingest code,
// every language, and ingest git of a git worktree checked out there), asks
// every predictor "which files are related to f?" for every source file f
// the commit changed, and scores the answers against the commit's other
// changed source files (recall@10, hit@3), each with a bootstrap interval
// over commits (bootstrap.go). SPEC.md §11 defines the selection of
// commits, the queries, the metrics and the built-in predictors.
//
// Invariants:
//   - Memory at a commit is the store's latest state after ingesting the
//     worktree at that commit; one store and one worktree are reused from
//     commit to commit (ingest writes only the difference), which gives the
//     same graph as a fresh store would (tested: equal snapshot hashes).
//     Commits are replayed oldest first.
//   - A predictor never sees the commit it is asked about: the memory, the
//     worktree and the git history it reads all stop at the parent.
//   - Every predictor answers the same queries in the same run; only source
//     files other than the query count, whatever a predictor returns.
//   - Results are deterministic for a given repository, commit range and
//     toolchain: predictors break every tie by a documented rule.
//   - The package never imports cli; it drives ingest, lmdbstore, storesnap
//     and engines directly.
package eval
