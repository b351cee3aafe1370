package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestResonateSweepJSON: every --sweep line is a resonant frequency with
// antinodes, frequencies ascending.
func TestResonateSweepJSON(t *testing.T) {
	snap := writeFixture(t, false)
	lines := jsonLines(t, ok(t, "--json", "resonate", "--snapshot", snap, "pkg/a.go", "--sweep"))
	if len(lines) == 0 {
		t.Fatal("no resonant frequency")
	}
	prev := 0.0
	for _, l := range lines {
		num, _ := l["frequency"].(json.Number)
		f, err := num.Float64()
		if err != nil {
			t.Fatalf("frequency %v: %v", l["frequency"], err)
		}
		if f <= prev {
			t.Errorf("frequencies not ascending: %v then %v", prev, f)
		}
		prev = f
		if ants, _ := l["antinodes"].([]any); len(ants) == 0 {
			t.Errorf("frequency %v has no antinodes", f)
		}
	}
	if out := ok(t, "resonate", "--snapshot", snap, "pkg/a.go", "--sweep"); !strings.HasPrefix(out, "frequency ") {
		t.Errorf("text sweep output starts %q", out[:min(len(out), 30)])
	}
}
