package cli

import "testing"

func TestDelNode(t *testing.T) {
	db := newStore(t)
	put := revOf(t, ok(t, "--db", db, "put-node", "sym:a.F"))
	del := revOf(t, ok(t, "--db", db, "del-node", "sym:a.F", "--task", "t9"))
	if del <= put {
		t.Fatalf("del-node rev %d not after put rev %d", del, put)
	}
	wantFailure(t, memctl(t, "--db", db, "get-node", "sym:a.F"), ExitNotFound)
	ok(t, "--db", db, "get-node", "sym:a.F", "--at-rev", revString(put))

	before := fingerprint(t, db)
	wantFailure(t, memctl(t, "--db", db, "del-node", "sym:nope"), ExitNotFound)
	if fingerprint(t, db) != before {
		t.Errorf("failed del-node changed the store")
	}
}
