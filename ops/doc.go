// Package ops holds memctl's operations: the one definition of each thing
// the CLI and the MCP server both do. A CLI verb and an MCP tool are
// adapters: they turn their arguments into one request, call one function
// here, and print the record it returns (package records). ingest/codetree
// serves ingest to both surfaces the same way.
//
// Invariants:
//   - An operation takes what it works on as input: a *lmdbstore.Store or a
//     transaction for the store's operations, an *engines.Engine for the
//     ranked ones. How a surface opens the store or obtains an engine
//     (a snapshot file, the MCP server's engine snapshot) stays in the
//     surface; ops imports neither surface nor any snapshot cache.
//   - Defaults are the engines' and the store's. A surface that wants
//     another default (the MCP server's page sizes, the CLI's --top) sets
//     it in the request.
//   - A request the operation refuses is an error that errors.Is
//     ErrInvalid (CLI: exit 2; MCP: a tool error). Messages name the field
//     as the JSON record spells it; the surface adds where (a batch line,
//     an op index).
//   - Records are records' types, field for field SPEC.md §6.3, so the two
//     surfaces print the same bytes.
//
// Where things go: a new operation both surfaces offer is a file here
// (logop.go, batch.go, edges.go, admin.go, ranked.go are the templates),
// then a cli/cmd_<verb>.go and an mcpserver tool that call it. An operation
// only one surface has stays in that surface until the other gains it.
package ops
