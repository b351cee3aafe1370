// Package mcpserver is memctl's Model Context Protocol server: the tools a
// coding agent calls over stdio (one long-lived process per agent, any
// number of processes on one store). SPEC.md §10 lists every tool, its
// arguments and its output; the reference memory server's nine tools are
// mapped onto nodes and edges as §10.4 describes, and answer as the
// reference does (its text content, annotations, order, lenient
// arguments; TestReferenceDifferential runs both). Which tools a server
// offers is chosen at start (ToolSelection, §10.5): a lean default.
//
// Invariants:
//   - One call, one transaction: a read tool runs in one fresh read
//     transaction (so it sees every commit made before the call by any
//     process), a write tool in one Store.Update (one revision, all or
//     nothing). No transaction outlives its call, so the server never holds
//     LMDB's write lock between calls.
//   - Caches hold only what cannot change once committed: node id → key,
//     relation id → name, revision → commit time (ids, relations and the
//     log are never rewritten), and engine snapshots keyed by the revision
//     they were exported at (rebuilt when a call asks for a revision the
//     cache does not hold; a latest read compares against the store's
//     current revision first).
//   - Bad input never ends the process: arguments are validated against the
//     tool's input schema and every store error becomes a tool error with
//     one line of text; a message the SDK cannot parse gets a JSON-RPC
//     error from the transport (transport.go); a panic in a handler becomes
//     a tool error. A failed write leaves the store as it was.
//   - stdout carries protocol messages only; logs go to Options.Logger.
//     Without a store, ServeUnavailable still speaks the protocol and
//     answers every request with why.
//   - Payloads reach the store as the client spelled them: tool arguments
//     are decoded from the raw request (the SDK's typed AddTool would
//     re-marshal them through a map, rounding numbers beyond float64); the
//     store then keeps its canonical form (SPEC.md §2).
//
// Nothing here imports cli; cli's `memctl mcp` opens the store and calls
// Serve.
package mcpserver
