package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// usageSources reads a hand-checked fixture expectation
// (testdata/treesitter/LANG.want: "SRC REL DST" edge lines) and returns
// the symbols with a usage edge (calls, references, implements, tests) into
// dst: the direct dependents impact must find.
func usageSources(t *testing.T, want, dst string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "treesitter", want))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	usage := map[string]bool{"calls": true, "references": true, "implements": true, "tests": true}
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 3 && usage[fields[1]] && fields[2] == dst && strings.HasPrefix(fields[0], "sym:") {
			seen[fields[0]] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestEnginesOnTreeSitterGraphs: the engines work on Python, TypeScript and
// Rust graphs unchanged (relation roles, no language-specific code): impact
// of a symbol finds, at distance 1, exactly the symbols the fixture's
// expectation says use it, and activation from a file reaches past it.
func TestEnginesOnTreeSitterGraphs(t *testing.T) {
	cases := []struct {
		lang, want, symbol, file string
	}{
		{"python", "python.want", "sym:py:pkg.core.make", "file:pkg/core.py"},
		{"python", "python.want", "sym:py:pkg.util.helper", "file:pkg/util.py"},
		{"typescript", "typescript.want", "sym:ts:src/lib/square.ts#square", "file:src/lib/square.ts"},
		{"typescript", "typescript.want", "sym:js:src/legacy/calc.js#add", "file:src/legacy/calc.js"},
		{"rust", "rust.want", "sym:rs:geo_kit::unit", "file:src/lib.rs"},
		{"rust", "rust.want", "sym:rs:geo_kit::util::double", "file:src/util.rs"},
	}
	snaps := map[string]string{}
	dir := t.TempDir() // outlives the subtests
	for _, c := range cases {
		t.Run(c.lang+"/"+c.symbol, func(t *testing.T) {
			snap, done := snaps[c.lang]
			if !done {
				db := newStore(t)
				ok(t, "--db", db, "ingest", "code", filepath.Join("..", "testdata", "treesitter", c.lang))
				snap = filepath.Join(dir, c.lang+".snap")
				ok(t, "--db", db, "export", "--out", snap)
				snaps[c.lang] = snap
			}
			want := usageSources(t, c.want, c.symbol)
			if len(want) == 0 {
				t.Fatalf("%s: the fixture has no usage edge into %s", c.want, c.symbol)
			}
			var got []string
			for _, line := range jsonLines(t, answer(t, "--json", "impact", "--snapshot", snap, c.symbol)) {
				key, _ := line["key"].(string)
				if d, _ := line["distance"].(json.Number); d == "1" && strings.HasPrefix(key, "sym:") {
					got = append(got, key)
				}
			}
			sort.Strings(got)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("impact %s, symbols at distance 1 (-fixture +impact):\n%s", c.symbol, d)
			}
			// Activation from the file reaches beyond the file itself.
			var others int
			for _, line := range jsonLines(t, answer(t, "--json", "activate", "--snapshot", snap, c.file, "--top", "20")) {
				if key, _ := line["key"].(string); key != c.file {
					others++
				}
			}
			if others == 0 {
				t.Errorf("activate %s: nothing but the seed", c.file)
			}
		})
	}
}
