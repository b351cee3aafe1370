package freshness

import (
	"testing"

	"github.com/memctl/memctl/ingest/codetree"
	"github.com/memctl/memctl/ingest/precise"
)

// A tree ingested with --precise is refreshed with --precise: the stat
// file's config says so and reads back; a config written before the field
// existed reads back without it.
func TestConfigKeepsPrecise(t *testing.T) {
	for _, p := range []*precise.Options{nil, {}} {
		o := Options{Ingest: codetree.Options{WithGo: true, Langs: []string{"python", "rust"}, Precise: p}}
		got, err := parseConfig(o.config())
		if err != nil {
			t.Fatal(err)
		}
		if (got.Precise != nil) != (p != nil) || !got.WithGo || len(got.Langs) != 2 || got.Langs[1] != "rust" {
			t.Errorf("config %q read back as %+v", o.config(), got)
		}
	}
	old := "go=true syntax=false offline=false vendor=false testdata=false hidden=false langs=python"
	if got, err := parseConfig(old); err != nil || got.Precise != nil || len(got.Langs) != 1 {
		t.Errorf("old config: %+v, %v", got, err)
	}
}
