package contextpack_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memctl/memctl/contextpack"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestGolden compares whole packs, Markdown and JSON, for the fixture
// store against files in testdata/ that were read and checked by hand
// against the fixture's comment: for lmdbstore/store.go the constraint on
// its directory, the contradiction between decision:fast and
// decision:new-retry, the locking policy by glob and the repository-wide
// decision apply; the superseded retry decision and the expired procedure
// are counted as hidden; r3's changes are "changed since" (the previous run
// is r2) and r1/r2's tasks are "attempted", newest first. The clock of the
// fixture is fixed, so the files are byte-stable. Regenerate with
// `go test ./contextpack -run TestGolden -update` and read the diff.
func TestGolden(t *testing.T) {
	s := fixture(t)
	a := contextpack.New(s, contextpack.Options{SnapshotPath: "-"})
	defer a.Close()
	for _, c := range []struct {
		name string
		req  contextpack.Request
	}{
		{"store_go", contextpack.Request{Targets: []string{"lmdbstore/store.go"}}},
		{"open_budget120", contextpack.Request{Targets: []string{"sym:example.com/m/lmdbstore.Open"}, Budget: 120}},
		{"cli_app_all", contextpack.Request{Targets: []string{"cli/app.go"}, All: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := assemble(t, a, c.req)
			js, err := json.MarshalIndent(p.JSON(), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			js = append(js, '\n')
			for _, f := range []struct {
				ext  string
				data []byte
			}{{".md", []byte(p.Markdown)}, {".json", js}} {
				path := filepath.Join("testdata", c.name+f.ext)
				if *update {
					if err := os.MkdirAll("testdata", 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, f.data, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(string(want), string(f.data)); d != "" {
					t.Errorf("%s (-golden +got):\n%s", path, d)
				}
			}
		})
	}
}
