package roles

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseRoundTrip(t *testing.T) {
	for _, r := range []Role{Memory, Structure, Usage, History} {
		got, err := Parse(r.String())
		if err != nil || got != r {
			t.Fatalf("Parse(%q) = %v, %v", r.String(), got, err)
		}
		if FromFlags(uint32(r.Bits())|3) != r {
			t.Fatalf("FromFlags(%#x) != %v", r.Bits()|3, r)
		}
		if r.Bits()&^Mask != 0 {
			t.Fatalf("%v bits %#x outside mask", r, r.Bits())
		}
	}
	if _, err := Parse("uses"); err == nil {
		t.Fatal("Parse(uses) succeeded")
	}
	if got, _ := Parse("USAGE"); got != Usage {
		t.Fatal("Parse is not case-insensitive")
	}
}

func TestKnown(t *testing.T) {
	want := map[string]Role{
		"defines": Structure, "references": Usage, "calls": Usage, "imports": Usage,
		"tests": Usage, "implements": Usage, "constrains": Memory, "decided_for": Memory,
		"derived_from": Memory, "supersedes": Memory, "contains": Structure, "co_changed": History,
		"contradicts": Memory,
	}
	for name, r := range want {
		if got, ok := Known(name); !ok || got != r {
			t.Errorf("Known(%q) = %v, %v; want %v", name, got, ok, r)
		}
	}
	if _, ok := Known("owns"); ok {
		t.Error("Known(owns) is ok")
	}
}

// TestBuiltins: the store's built-ins are SPEC §1's ten, with their fixed
// ids, default weight 1 and the role of §1's role table.
func TestBuiltins(t *testing.T) {
	want := []Relation{
		{Name: "defines", Role: Structure, ID: 1, DefaultWeight: 1},
		{Name: "references", Role: Usage, ID: 2, DefaultWeight: 1},
		{Name: "calls", Role: Usage, ID: 3, DefaultWeight: 1},
		{Name: "imports", Role: Usage, ID: 4, DefaultWeight: 1},
		{Name: "tests", Role: Usage, ID: 5, DefaultWeight: 1},
		{Name: "implements", Role: Usage, ID: 6, DefaultWeight: 1},
		{Name: "constrains", Role: Memory, ID: 7, DefaultWeight: 1, Policy: true, Unranked: true},
		{Name: "decided_for", Role: Memory, ID: 8, DefaultWeight: 1, Policy: true, Unranked: true},
		{Name: "derived_from", Role: Memory, ID: 9, DefaultWeight: 1},
		{Name: "supersedes", Role: Memory, ID: 10, DefaultWeight: 1, Unranked: true},
	}
	if d := cmp.Diff(want, Builtins()); d != "" {
		t.Errorf("Builtins (-want +got):\n%s", d)
	}
}

// TestSelectors: the sets code asks the table for, as SPEC §1, §9 and §12.2
// name them.
func TestSelectors(t *testing.T) {
	sorted := func(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
	for _, c := range []struct {
		name      string
		got, want []string
	}{
		{"code", WithRole(Structure, Usage), []string{"calls", "contains", "defines", "implements", "imports", "references", "tests"}},
		{"history", WithRole(History), []string{"co_changed"}},
		{"memory", WithRole(Memory), []string{"constrains", "contradicts", "decided_for", "derived_from", "supersedes"}},
		{"policy", PolicyRelations(), []string{"constrains", "decided_for"}},
	} {
		if d := cmp.Diff(c.want, sorted(c.got)); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, d)
		}
	}
	var unranked []string
	for _, name := range []string{"defines", "references", "calls", "imports", "tests", "implements", "constrains",
		"decided_for", "derived_from", "supersedes", "contains", "co_changed", "contradicts", "owns"} {
		if !Ranked(name) {
			unranked = append(unranked, name)
		}
	}
	if d := cmp.Diff([]string{"constrains", "decided_for", "supersedes", "contradicts"}, unranked); d != "" {
		t.Errorf("unranked (-want +got):\n%s", d)
	}
	for _, name := range []string{"contains", "co_changed"} {
		if r, _ := Lookup(name); !r.Bidirectional || r.ID != 0 {
			t.Errorf("%s: %+v, want bidirectional, registered on first use", name, r)
		}
	}
}

// TestRelationsIsACopy: a caller cannot change the vocabulary.
func TestRelationsIsACopy(t *testing.T) {
	rs := Relations()
	rs[0].Role = History
	if r, _ := Lookup(rs[0].Name); r.Role == History {
		t.Fatal("Relations exposes the table")
	}
}
