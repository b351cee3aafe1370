// Package enginesnap owns the engine snapshots of one store: CSR exports
// (SPEC.md §7) with an engine over them, kept between calls and served to
// every view whose answers they give unchanged. The MCP server's analysis
// tools, context packs (SPEC.md §10.3, §12.5) and, through Provider.At,
// any one-shot command read their snapshots here; there is no other cache
// of them.
//
// Invariants:
//   - Never a stale answer: a snapshot serves view V for a Kind only when
//     the rules (rules.go) show that an export at V would give that kind's
//     consumer the same answers; any other view is exported before it is
//     answered.
//   - One rule set. Whether an operation keeps a snapshot is decided in
//     one function (keeps) by the operation, the Kind, and for edges the
//     relation's ranking predicate (IsRankingRelation). A snapshot of one
//     Kind is never served for the other: a Ranking snapshot may lack
//     policy edges written since its export.
//   - A snapshot is immutable; the range of revisions it serves only
//     widens. Get returns it referenced; Release it when done. The last
//     release of a mapped file unmaps it; a snapshot in memory (every
//     Exact one) stays valid while referenced.
//   - Time comes only from Options.Clock; Builds counts exports, so tests
//     assert on it instead of on timing.
//   - An export starts from the latest view's snapshot it replaces
//     (storesnap.Base: the nodes the log shows unchanged are copied from
//     it) whenever storesnap can show the bytes are a full export's;
//     FromBase counts those exports.
//   - Persistence (Options.Path) is for Ranking snapshots only: the file
//     is written atomically (snapshot.WriteFile) and mapped; its validity
//     range lives in ValidityFile beside it. A file this package cannot
//     use (damaged, another history, no PageRank section) is ignored and
//     rebuilt, never misread.
package enginesnap
