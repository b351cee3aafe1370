// Package realgraph tests the engines on graphs ingested from real code
// (the Go standard library's net/http, read from the toolchain that runs
// the tests), where the hand-checked graphs of engines/ are too small to
// show what an agent would see: hubs, files with hundreds of symbols,
// thousands of edges. It holds no code besides its tests.
//
// Invariants the tests pin: activation's related profile ranks a file's
// test file near the top and is not swamped by one file's symbols;
// resonance lists the seed among its strongest nodes, does not let hubs
// win, and its sweep reports only interior energy peaks.
package realgraph
