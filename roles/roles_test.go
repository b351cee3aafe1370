package roles

import "testing"

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
