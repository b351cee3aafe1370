package cli

import "testing"

func TestDelEdge(t *testing.T) {
	db := newStore(t)
	r1 := revOf(t, ok(t, "--db", db, "put-edge", "a:1", "calls", "a:2"))
	r2 := revOf(t, ok(t, "--db", db, "put-edge", "a:1", "calls", "a:2", "--weight", "3"))
	r3 := revOf(t, ok(t, "--db", db, "del-edge", "a:1", "calls", "a:2", "--run", "cleanup"))
	// a:1 and a:2 were only the endpoints of the edge: with it gone they
	// are no node and have no edges (not found, SPEC §6.2).
	wantFailure(t, memctl(t, "--db", db, "get-out", "a:1"), ExitNotFound, "no such node and no edges")
	wantFailure(t, memctl(t, "--db", db, "get-in", "a:2"), ExitNotFound, "no such node and no edges")
	// History stays readable.
	diffJSON(t, ok(t, "--db", db, "--json", "get-out", "a:1", "--at-rev", revString(r1)), []map[string]any{edge("a:1", "calls", "a:2", r1, "1")})
	diffJSON(t, ok(t, "--db", db, "--json", "get-in", "a:2", "--at-rev", revString(r3-1)), []map[string]any{edge("a:1", "calls", "a:2", r2, "3")})
	// Deleting what is not there is "not found" and writes nothing.
	before := fingerprint(t, db)
	wantFailure(t, memctl(t, "--db", db, "del-edge", "a:1", "calls", "a:2"), ExitNotFound)
	if after := fingerprint(t, db); after != before {
		t.Errorf("failed del-edge changed the store")
	}
	// It can be put back.
	r4 := revOf(t, ok(t, "--db", db, "put-edge", "a:1", "calls", "a:2"))
	diffJSON(t, ok(t, "--db", db, "--json", "get-out", "a:1"), []map[string]any{edge("a:1", "calls", "a:2", r4, "1")})
}
