package cli

import (
	"strings"
	"testing"
)

var prdRelations = []string{"defines", "references", "calls", "imports", "tests", "implements",
	"constrains", "decided_for", "derived_from", "supersedes"}

func TestRelListAndAdd(t *testing.T) {
	db := newStore(t)
	rels := jsonLines(t, ok(t, "--db", db, "--json", "rel", "list"))
	names := map[string]bool{}
	for _, r := range rels {
		names[r["name"].(string)] = true
	}
	for _, want := range prdRelations {
		if !names[want] {
			t.Errorf("new store lacks relation %q", want)
		}
	}

	// The built-ins' roles (SPEC §1).
	wantRole := map[string]string{"defines": "structure", "references": "usage", "calls": "usage", "imports": "usage",
		"tests": "usage", "implements": "usage", "constrains": "memory", "decided_for": "memory",
		"derived_from": "memory", "supersedes": "memory"}
	for _, r := range rels {
		if r["role"] != wantRole[r["name"].(string)] {
			t.Errorf("%v: role %v, want %v", r["name"], r["role"], wantRole[r["name"].(string)])
		}
	}

	out := ok(t, "--db", db, "--json", "rel", "add", "owns", "--weight", "0.5", "--bidirectional", "--role", "structure")
	added := jsonLines(t, out)
	if len(added) != 1 || added[0]["name"] != "owns" || added[0]["id"] == nil || added[0]["rev"] == nil {
		t.Fatalf("rel add printed %q", out)
	}
	want := map[string]any{"id": added[0]["id"], "name": "owns", "default_weight": n("0.5"), "bidirectional": true, "inhibitory": false, "role": "structure"}
	diffJSON(t, ok(t, "--db", db, "--json", "rel", "list"), append(rels, want))

	// The new relation is usable, with its default weight.
	r := revOf(t, ok(t, "--db", db, "put-edge", "team:core", "owns", "file:a.go"))
	diffJSON(t, ok(t, "--db", db, "--json", "get-out", "team:core"), []map[string]any{edge("team:core", "owns", "file:a.go", r, "0.5")})

	// Text listing has a header and one row per relation.
	txt := ok(t, "--db", db, "rel", "list")
	lines := strings.Split(strings.TrimSuffix(txt, "\n"), "\n")
	if len(lines) != len(rels)+2 || !strings.HasPrefix(lines[0], "ID  NAME") || !strings.Contains(lines[len(lines)-1], "owns") ||
		!strings.Contains(lines[len(lines)-1], "structure") || !strings.HasSuffix(lines[len(lines)-1], "bidirectional") {
		t.Errorf("rel list text:\n%s", txt)
	}
}

func TestRelAddBadName(t *testing.T) {
	db := newStore(t)
	before := fingerprint(t, db)
	for _, name := range []string{"", "has space", "calls"} {
		r := memctl(t, "--db", db, "rel", "add", name)
		if r.Code != ExitUsage && r.Code != ExitConflict {
			t.Errorf("rel add %q: exit %d (%s), want a usage error", name, r.Code, r.Stderr)
		}
	}
	if r := memctl(t, "--db", db, "rel", "add", "uses", "--role", "dependency"); r.Code != ExitUsage || !strings.Contains(r.Stderr, "unknown role") {
		t.Errorf("rel add --role dependency: exit %d (%s), want a usage error", r.Code, r.Stderr)
	}
	if fingerprint(t, db) != before {
		t.Errorf("failed rel add changed the store")
	}
}
