// Package eval measures how good memctl's answers are on a real code tree
// (SPEC §11): it builds memory from the tree in a temporary store, exports
// a snapshot, and scores the engines against an expectation computed
// independently from the graph itself.
//
// Invariants: eval never writes outside its temporary directory (removed
// before returning), never imports cli, and computes every expectation
// from the snapshot's edges and relation roles, not from the engine it
// scores.
package eval
