package cli

import "testing"

// TestPagerankStoredEqualsComputed: the section written at export and the
// on-demand computation print the same bytes.
func TestPagerankStoredEqualsComputed(t *testing.T) {
	stored := ok(t, "--json", "pagerank", "--snapshot", writeFixture(t, true), "--top", "0")
	computed := ok(t, "--json", "pagerank", "--snapshot", writeFixture(t, false), "--top", "0")
	if stored != computed {
		t.Errorf("stored section prints\n%s\ncomputed prints\n%s", stored, computed)
	}
}
